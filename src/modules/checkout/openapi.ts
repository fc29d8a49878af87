// The payment-link operations of the OpenAPI document, beside the routes that serve them.
import { type ApiOperation } from '../../platform/http/openapi';
import { createPaymentLinkSchema, listPaymentLinksQuery } from './schemas';

const linkIdParameter = {
  name: 'linkId',
  description: "The `link_id`. Unknown, or another app's: `404 link_not_found`.",
  example: 'pl_abcdefghijklmnopqrst',
};

export const paymentLinkOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/payment-links',
    operationId: 'createPaymentLink',
    tag: 'Payment links',
    summary: 'Make a payment link',
    description:
      "A link (and its QR code) that buyers pay on durapay's hosted page: in WeChat (signed in by OAuth `snsapi_base`, a JSAPI order), in Alipay (`auth_base`, `alipay.trade.create` and `tradePay`), or in any other browser (the QR code to scan, and H5 pay where a channel offers it). Each payment is an ordinary order of this app with `payment_link_id`, notified to the link's `notify_url`, refundable and reconciled like any other. The link never takes more than `max_payments` paid orders: while a buyer pays, one of its payments is held for that buyer's order (until the order is paid, or closes after 10 minutes unpaid), and other buyers are told someone is paying. A repeat of the same `merchant_link_no` with the same fields answers the same link (`is_idempotent: true`); with other fields, `400 invalid_param`.",
    scope: 'payments',
    body: { name: 'PaymentLinkRequest', schema: createPaymentLinkSchema, required: true },
    data: 'CreatedPaymentLink',
    errors: { 400: ['invalid_param', 'missing_param'], 422: ['order_not_found'] },
  },
  {
    method: 'get',
    path: '/api/v1/payment-links',
    operationId: 'listPaymentLinks',
    tag: 'Payment links',
    summary: "List the app's payment links",
    description: 'Newest first, by offset.',
    scope: 'payments',
    query: listPaymentLinksQuery,
    data: 'PaymentLinkPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/api/v1/payment-links/{linkId}',
    operationId: 'getPaymentLink',
    tag: 'Payment links',
    summary: 'Read a payment link',
    description: 'The link with its status now and how many payments it has taken.',
    scope: 'payments',
    pathParameters: [linkIdParameter],
    data: 'PaymentLink',
    errors: { 404: ['link_not_found'] },
  },
  {
    method: 'post',
    path: '/api/v1/payment-links/{linkId}/deactivate',
    operationId: 'deactivatePaymentLink',
    tag: 'Payment links',
    summary: 'Deactivate a payment link',
    description:
      'From now on the link takes no new order; a buyer who opens it is told it is no longer active. Orders already made go on (a buyer paying one may still pay it). Deactivating again changes nothing.',
    scope: 'payments',
    pathParameters: [linkIdParameter],
    data: 'PaymentLink',
    errors: { 404: ['link_not_found'] },
  },
];
