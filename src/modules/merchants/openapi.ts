// The merchant operations of the OpenAPI document, beside the routes that serve them.
import { type ApiOperation, type OperationPathParameter } from '../../platform/http/openapi';
import { createMerchantSchema, listMerchantsQuery } from './schemas';
import { CHANNEL_ACCOUNTS } from '../../channels/registry';
import { attachAnySchema } from './accounts';
import { authorizationSchema } from './account-routes';

/** The `{merchantID}` of every merchant path, the applications' included. */
export const merchantIdParameter: OperationPathParameter = {
  name: 'merchantID',
  description: 'The `merchant_id` you gave the merchant (case kept).',
  example: 'shop-001',
};

const channelCodeParameter: OperationPathParameter = {
  name: 'channel_code',
  description: `The channel of the account: ${CHANNEL_ACCOUNTS.map((c) => `\`${c.code}\``).join(', ')}.`,
  example: 'wechatpay',
};

export const merchantOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/merchant',
    operationId: 'createMerchant',
    tag: 'Merchants',
    summary: 'Create a merchant',
    description:
      'Records a merchant of this app. Any failure of the creation, a duplicate `merchant_id` included, is `500 database_error` with a clean message.',
    scope: 'merchants',
    body: { name: 'CreateMerchantRequest', schema: createMerchantSchema, required: true },
    data: 'CreatedMerchant',
    errors: { 400: ['invalid_param'], 500: ['database_error'] },
  },
  {
    method: 'get',
    path: '/api/v1/merchant',
    operationId: 'listMerchants',
    tag: 'Merchants',
    summary: 'List merchants',
    description:
      'Newest first; `status` filters exactly. Paging values are never refused: `limit` above 100 is read as 100, a negative or non-integer `limit` or `offset` as 0; `limit` and `offset` in the answer are the values used.',
    scope: 'merchants',
    query: listMerchantsQuery,
    data: 'MerchantPage',
    errors: { 400: ['invalid_param'], 500: ['database_error'] },
  },
  {
    method: 'post',
    path: '/api/v1/merchant/upload-file',
    operationId: 'uploadMerchantFile',
    tag: 'Merchants',
    summary: 'Upload an onboarding document',
    description:
      'Forwards a document to the channel and returns its `file_id`. Sign it like any request: `Content-Digest` covers the multipart body as sent. Only the base name of the file name is forwarded; durapay keeps the file id, media type, size and SHA-256, never the content.',
    scope: 'merchants',
    multipart: {
      type: 'object',
      required: ['file_media_type', 'file'],
      properties: {
        channel_code: { type: 'string', description: 'Default from configuration.', examples: ['sandbox'] },
        file_media_type: {
          type: 'string',
          enum: ['image/jpeg', 'image/png', 'image/bmp', 'application/pdf'],
          description: 'Empty: `400 invalid_param`, "file_media_type is required".',
        },
        file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'At most 5 MiB.' },
      },
    },
    data: 'UploadedFile',
    errors: { 400: ['invalid_param'], 500: ['internal_system'] },
  },
  {
    method: 'get',
    path: '/api/v1/merchant/{merchantID}',
    operationId: 'getMerchant',
    tag: 'Merchants',
    summary: 'Get a merchant',
    description:
      'The merchant record, its bank account masked but for the last 4 digits. An unknown merchant, or another app\'s, is `404 order_not_found`, "merchant not found".',
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    data: 'Merchant',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'], 500: ['database_error'] },
  },
  {
    method: 'get',
    path: '/api/v1/merchant/{merchantID}/channel-accounts',
    operationId: 'listChannelAccounts',
    tag: 'Merchants',
    summary: "List a merchant's channel accounts",
    description: "The merchant's attached accounts, one per channel at most; Alipay tokens masked.",
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    data: 'ChannelAccountList',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'], 500: ['database_error'] },
  },
  {
    method: 'put',
    path: '/api/v1/merchant/{merchantID}/channel-accounts/{channel_code}',
    operationId: 'attachChannelAccount',
    tag: 'Merchants',
    summary: 'Attach an account at a channel',
    description: `Attaches the merchant's existing account at a channel, named by one of the fields its channel declares: ${CHANNEL_ACCOUNTS.map(
      ({ code, accounts }) => `\`${code}\` ${accounts.kinds.map((k) => `\`{${k.kind}}\``).join(' or ')}`,
    ).join(', ')}. The channel confirms it first where it can (${CHANNEL_ACCOUNTS.flatMap(({ accounts }) =>
      accounts.kinds.map((k) => `\`${k.kind}\`: ${k.confirmation}`),
    ).join(
      ' ',
    )}); a refused account is \`400 invalid_param\` with the channel's reason, a channel that does not answer \`502 channel_timeout\`, and nothing is saved. It replaces the account attached at that channel; the same body again changes nothing. The merchant becomes \`active\`.`,
    scope: 'merchants',
    pathParameters: [merchantIdParameter, channelCodeParameter],
    body: { name: 'AttachChannelAccountRequest', schema: attachAnySchema, required: true },
    data: 'ChannelAccount',
    errors: {
      400: ['invalid_param'],
      404: ['order_not_found'],
      500: ['database_error'],
      502: ['channel_timeout'],
    },
  },
  {
    method: 'post',
    path: '/api/v1/merchant/{merchantID}/channel-accounts/alipay/authorization',
    operationId: 'startAlipayAuthorization',
    tag: 'Merchants',
    summary: 'Start an Alipay third-party authorisation',
    description:
      "Answers Alipay's authorisation page for this merchant (第三方应用授权). Send the merchant there: once it authorises this app, Alipay sends its browser to `/api/v1/channels/alipay/app-auth`, where durapay exchanges the code for a token, saves it sealed as the merchant's Alipay account (`source: authorized`), posts `merchant.channel_account.updated` to `notify_url`, refreshes the token before it expires, and sends the browser on to `redirect_url` with `merchant_id`, `channel_code` and `result=authorized`. The link works once, for an hour.",
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    body: { name: 'StartAuthorizationRequest', schema: authorizationSchema, required: false },
    data: 'AuthorizationStarted',
    errors: {
      400: ['invalid_param'],
      404: ['order_not_found'],
      500: ['database_error'],
      502: ['channel_not_support'],
    },
  },
  {
    method: 'delete',
    path: '/api/v1/merchant/{merchantID}/channel-accounts/{channel_code}',
    operationId: 'detachChannelAccount',
    tag: 'Merchants',
    summary: 'Detach an account at a channel',
    description:
      'New orders at that channel are refused (`502 channel_create_fail`); orders already made keep the account they were made with. No account attached there: `404 order_not_found`.',
    scope: 'merchants',
    pathParameters: [merchantIdParameter, channelCodeParameter],
    data: 'DetachedChannelAccount',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'], 500: ['database_error'] },
  },
];
