// The merchants module's public surface: what other modules and the API may use.
export { merchantRoutes, type MerchantRoutesDeps } from './routes';
export { merchantIdParameter, merchantOperations } from './openapi';
export {
  MerchantRepository,
  merchantsSealedWith,
  sealLegacyMerchantData,
  type MerchantRecord,
  type MerchantSearch,
  type MerchantWithPersonalData,
} from './repository';
export { applicantOf, merchantView } from './view';
export { DEFAULT_MAX_SHARING_RATIO, MERCHANT_STATUSES, type MerchantStatus } from './rules';
export { ChannelAccountRepository, NoSuchMerchantError, onboardedClaim } from './account-repository';
export { attachAccount, attachMerchantAccount } from './attach';
export {
  ACCOUNT_KINDS,
  accountView,
  attachAnySchema,
  attachSchema,
  claimOf,
  type ChannelAccount,
} from './accounts';
export { createMerchantActivities, type MerchantActivities } from './activities';
