// The payment-link operations of the OpenAPI document, beside the routes that serve them.
import { type ApiOperation } from '../../platform/http/openapi';
import { merchantIdParameter } from '../merchants';
import {
  createMerchantCodeSchema,
  createPaymentLinkSchema,
  listMerchantCodesQuery,
  listPaymentLinksQuery,
} from './schemas';

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

const codeIdParameter = {
  name: 'codeId',
  description:
    "The `code_id`. Unknown, or another merchant's: `404 link_not_found`, `standing code not found`.",
  example: 'mc_abcdefghijklmnopqrst',
};

export const merchantCodeOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/merchant/{merchantID}/codes',
    operationId: 'createMerchantCode',
    tag: 'Payment links',
    summary: "Make a merchant's standing QR code (码牌)",
    description:
      "A code to print once and be paid any number of times: the buyer scans it with WeChat or Alipay (or opens it in any browser), enters the amount (within `min_amount` and `max_amount`) and a note, and pays as on a payment link. Each payment is an ordinary order of the merchant with `standing_code_id` and `buyer_note`, its subject the code's `name`, notified to `notify_url`. The merchant takes payments at the channels where it has an account. Unknown merchant: `404 order_not_found`.",
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    body: { name: 'MerchantCodeRequest', schema: createMerchantCodeSchema, required: true },
    data: 'MerchantCode',
    errors: { 400: ['invalid_param', 'missing_param'], 404: ['order_not_found'] },
  },
  {
    method: 'get',
    path: '/api/v1/merchant/{merchantID}/codes',
    operationId: 'listMerchantCodes',
    tag: 'Payment links',
    summary: "List a merchant's standing codes",
    description: 'Newest first, by offset.',
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    query: listMerchantCodesQuery,
    data: 'MerchantCodePage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/api/v1/merchant/{merchantID}/codes/{codeId}',
    operationId: 'getMerchantCode',
    tag: 'Payment links',
    summary: 'Read a standing code',
    description: 'The code, its page URL and the same as a QR image.',
    scope: 'merchants',
    pathParameters: [merchantIdParameter, codeIdParameter],
    data: 'MerchantCode',
    errors: { 404: ['link_not_found'] },
  },
  {
    method: 'post',
    path: '/api/v1/merchant/{merchantID}/codes/{codeId}/disable',
    operationId: 'disableMerchantCode',
    tag: 'Payment links',
    summary: 'Disable a standing code',
    description:
      'From now on a buyer who scans it is told it is no longer in use; orders already made go on. Disabling again changes nothing.',
    scope: 'merchants',
    pathParameters: [merchantIdParameter, codeIdParameter],
    data: 'MerchantCode',
    errors: { 404: ['link_not_found'] },
  },
  ...(['png', 'svg'] as const).map((kind): ApiOperation => ({
    method: 'get',
    path: `/api/v1/merchant/{merchantID}/codes/{codeId}/qr.${kind}`,
    operationId: kind === 'png' ? 'merchantCodePng' : 'merchantCodeSvg',
    tag: 'Payment links',
    summary: `The standing code as a printable ${kind.toUpperCase()}`,
    description:
      kind === 'png'
        ? "The code's URL as a 1024 × 1024 PNG (error correction Q, a four-module quiet zone), to print."
        : "The code's URL as an SVG (error correction Q, a four-module quiet zone), sharp at any size.",
    scope: 'merchants',
    pathParameters: [merchantIdParameter, codeIdParameter],
    data: null,
    file: {
      mediaType: kind === 'png' ? 'image/png' : 'image/svg+xml',
      description: 'The QR code image.',
    },
    errors: { 404: ['link_not_found'] },
  })),
];
