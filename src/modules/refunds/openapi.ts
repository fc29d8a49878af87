// The refund operations of the OpenAPI document, beside the routes that serve them.
import { type ApiOperation } from '../../platform/http/openapi';
import { abnormalRefundSchema, refundSchema } from './schemas';

export const refundOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/pay/refund',
    operationId: 'refund',
    tag: 'Payments',
    summary: 'Refund a paid order',
    description:
      "Starts a refund of at most the order's refundable amount (its amount less the refunds succeeded, abnormal or in flight, and less what was shared to receivers and not returned); its final status arrives by callback or polling and is posted to `notify_url`. Refunds of one order are serialized. A refund the channel did not answer (`502 channel_timeout`) keeps its amount reserved: send it again with the same `merchant_refund_no` to learn how it ended.",
    scope: 'payments',
    body: { name: 'RefundRequest', schema: refundSchema, required: true },
    data: 'RefundResult',
    errors: {
      400: ['invalid_param'],
      422: ['order_not_found', 'order_not_paid', 'order_closed', 'refund_amount_exceed'],
      502: ['channel_refund_fail', 'channel_timeout', 'channel_not_support'],
    },
  },
  {
    method: 'post',
    path: '/api/v1/pay/refund/abnormal',
    operationId: 'applyAbnormalRefund',
    tag: 'Payments',
    summary: 'Pay out an abnormal refund another way',
    description:
      "Asks the channel to pay an `abnormal` refund (the buyer's account could not take it) to a bank card instead (WeChat Pay 发起异常退款). The bank account and name are sent sealed with the channel's key and never stored. The refund stays `abnormal` until the channel pays it out, then becomes `success` and `refund.succeeded` is posted. A refund that is not abnormal: `400 invalid_param`.",
    scope: 'payments',
    body: { name: 'AbnormalRefundRequest', schema: abnormalRefundSchema, required: true },
    data: 'AbnormalRefundResult',
    errors: {
      400: ['invalid_param'],
      422: ['refund_not_found'],
      502: ['channel_refund_fail', 'channel_timeout', 'channel_not_support'],
    },
  },
  {
    method: 'get',
    path: '/api/v1/pay/refund/query/{refundNo}',
    operationId: 'queryRefund',
    tag: 'Payments',
    summary: 'Query a refund',
    description:
      "Reads the refund as durapay has recorded it. An unknown refund, or another app's, answers `422 refund_not_found`.",
    scope: 'payments',
    pathParameters: [
      {
        name: 'refundNo',
        description: 'The `refund_no`. Empty: `400 missing_param`, "refund_no is required".',
        example: 'R202611220531020000000007',
      },
    ],
    data: 'Refund',
    errors: { 400: ['invalid_param', 'missing_param'], 422: ['refund_not_found'] },
  },
];
