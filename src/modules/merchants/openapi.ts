// The merchant operations of the OpenAPI document, beside the routes that serve them.
import { type ApiOperation, type OperationPathParameter } from '../../platform/http/openapi';
import { createMerchantSchema, listMerchantsQuery } from './schemas';

/** The `{merchantID}` of every merchant path, the applications' included. */
export const merchantIdParameter: OperationPathParameter = {
  name: 'merchantID',
  description: 'The `merchant_id` you gave the merchant (case kept).',
  example: 'shop-001',
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
];
