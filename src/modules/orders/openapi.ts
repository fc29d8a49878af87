// The payment operations of the OpenAPI document, beside the routes that serve them; the API
// assembles every module's operations into the document.
import { type ApiOperation, type OperationPathParameter } from '../../platform/http/openapi';
import { closeOrderSchema, createOrderSchema } from './schemas';

const tradeNoParameter: OperationPathParameter = {
  name: 'tradeNo',
  description: 'The order\'s `trade_no`. Empty: `400 missing_param`, "trade_no is required".',
  example: 'P202611220531020000000042',
};

export const paymentOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/pay/unified-order',
    operationId: 'createOrder',
    tag: 'Payments',
    summary: 'Create a payment order',
    description:
      "Creates the order at the channel and returns what the buyer pays with. Idempotent on `(app, merchant_order_no)`: a repeat of a pending order with the same amount, pay method, channel, merchant and sharing amount returns the same `trade_no` with `is_idempotent: true` and calls the channel no more, one with any of those different answers `400 invalid_param`; one that is paid or refunded answers `422 order_already_paid`, one closed `422 order_closed`. A create the channel refused leaves no order behind. `pay_method: barcode` (the cashier scanned the buyer's wallet code, `auth_code`) is answered within 8 s: `status: paid`, or `paying` while the buyer confirms (the order is followed for `BARCODE_WAIT` and reversed if not paid); a code the channel refused is `422 order_not_paid` with its reason (the order stays, closed as `refused`); a channel that did not answer is `502 channel_timeout` once the payment's reverse has been asked. The same `merchant_order_no` with another `auth_code` is `400 invalid_param`, never a second charge.",
    scope: 'payments',
    body: { name: 'CreateOrderRequest', schema: createOrderSchema, required: true },
    data: 'CreatedOrder',
    errors: {
      400: ['invalid_param', 'invalid_pay_method', 'invalid_amount'],
      422: [
        'order_not_found',
        'sharing_amount_exceed',
        'sharing_not_config',
        'sharing_fee_exceed',
        'order_already_paid',
        'order_closed',
        'order_not_paid',
      ],
      502: ['channel_create_fail', 'channel_timeout', 'channel_not_support'],
    },
  },
  {
    method: 'get',
    path: '/api/v1/pay/query/{tradeNo}',
    operationId: 'queryOrder',
    tag: 'Payments',
    summary: 'Query an order',
    description:
      "Reads the order as durapay has recorded it. An unknown order, or another app's, answers `422 order_not_found`.",
    scope: 'payments',
    pathParameters: [tradeNoParameter],
    data: 'Order',
    errors: { 400: ['invalid_param', 'missing_param'], 422: ['order_not_found'] },
  },
  {
    method: 'post',
    path: '/api/v1/pay/close',
    operationId: 'closeOrder',
    tag: 'Payments',
    summary: 'Close a pending order',
    description:
      'Closes a pending order at the channel. Closing a closed order succeeds again; a paid or refunded one answers `422 order_already_paid`. If the channel reports the order paid while closing, it becomes `paid` and the answer is `422 order_already_paid`.',
    scope: 'payments',
    body: { name: 'CloseOrderRequest', schema: closeOrderSchema, required: true },
    data: null,
    errors: {
      400: ['invalid_param'],
      // order_closed: a pending order whose workflow an operator ended can no longer be closed.
      422: ['order_not_found', 'order_already_paid', 'order_closed'],
      502: ['channel_timeout', 'channel_not_support'],
    },
  },
];
