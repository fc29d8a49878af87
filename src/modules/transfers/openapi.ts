// The transfer operations of the OpenAPI document, beside the routes that serve them.
import { type ApiOperation } from '../../platform/http/openapi';
import { cancelTransferSchema, transferSchema } from './schemas';

export const transferOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/transfer',
    operationId: 'transfer',
    tag: 'Transfers',
    summary: "Pay out to a person's wallet",
    description:
      "Transfers from the merchant's (or the service provider's) channel account to a WeChat or Alipay user. The channel is asked once; the answer is the transfer as the channel took it: `processing`, `wait_user_confirm` (WeChat Pay: hand `pay_credential.package_info` to `wx.requestMerchantTransfer`; unconfirmed, it is cancelled after 24 h), or already `success`. Its end is posted to `notify_url` (`transfer.succeeded`, `transfer.failed`, `transfer.cancelled`). The same request again answers the same transfer. Refused by the channel: `502 channel_transfer_fail` (the transfer is recorded `failed`). Not yet under way when the request's deadline came (durapay's workflow service unreachable): `502 channel_timeout`; send the same request again.",
    scope: 'payments',
    body: { name: 'TransferRequest', schema: transferSchema, required: true },
    data: 'Transfer',
    errors: {
      400: ['invalid_param', 'invalid_amount'],
      502: ['channel_transfer_fail', 'channel_not_support', 'channel_timeout'],
    },
  },
  {
    method: 'get',
    path: '/api/v1/transfer/query/{transferNo}',
    operationId: 'queryTransfer',
    tag: 'Transfers',
    summary: 'Query a transfer',
    description:
      "Reads the transfer as durapay has recorded it. An unknown transfer, or another app's, answers `422 transfer_not_found`.",
    scope: 'payments',
    pathParameters: [
      {
        name: 'transferNo',
        description: 'The `transfer_no`. Empty: `400 missing_param`, "transfer_no is required".',
        example: 'T202611270531020000000042',
      },
    ],
    data: 'Transfer',
    errors: { 400: ['invalid_param', 'missing_param'], 422: ['transfer_not_found'] },
  },
  {
    method: 'post',
    path: '/api/v1/transfer/cancel',
    operationId: 'cancelTransfer',
    tag: 'Transfers',
    summary: 'Cancel a transfer',
    description:
      'Asks the channel to cancel a transfer the payee has not received (WeChat Pay: before it is confirmed). Answers the transfer: `cancelled`, or still `processing` while the channel finishes the cancel (`transfer.cancelled` is posted when it has). A transfer that has ended: `400 invalid_param` (a cancelled one is answered as it is); too late at the channel: `502 channel_transfer_fail`; a channel that cannot cancel (Alipay): `502 channel_not_support`.',
    scope: 'payments',
    body: { name: 'CancelTransferRequest', schema: cancelTransferSchema, required: true },
    data: 'Transfer',
    errors: {
      400: ['invalid_param'],
      422: ['transfer_not_found'],
      502: ['channel_transfer_fail', 'channel_not_support', 'channel_timeout'],
    },
  },
];
