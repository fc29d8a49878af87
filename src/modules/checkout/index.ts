// The checkout module's public surface (SPEC §15): payment links and the buyer's hosted pages.
export { CheckoutService, type CheckoutServiceDeps } from './service';
export { checkoutPageRoutes, merchantCodeRoutes, paymentLinkRoutes } from './routes';
export { merchantCodeOperations, paymentLinkOperations } from './openapi';
export { createMerchantCodeSchema, createPaymentLinkSchema } from './schemas';
