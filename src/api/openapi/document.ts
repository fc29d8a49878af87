// Longer than 400 lines: the table of operations is the document, one entry per endpoint in the
// order SPEC gives them; the answers' schemas are in ./response-schemas.ts.
import type Joi from 'joi';
import parse from 'joi-to-json';
import { applySchema } from '../../modules/applications';
import { createMerchantSchema, listMerchantsQuery } from '../../modules/merchants';
import { listNotificationsQuery, resendNotificationBody } from '../../modules/notifications';
import { closeOrderSchema, createOrderSchema } from '../../modules/orders';
import { abnormalRefundSchema, refundSchema } from '../../modules/refunds';
import {
  DATA_SCHEMAS,
  ENVELOPE_SCHEMAS,
  errorEnvelope,
  schemaRef,
  successEnvelope,
  type DocumentedErrorCode,
} from './response-schemas';

/**
 * The OpenAPI 3.1 description of durapay's HTTP interface (SPEC §1–§6), built once at start:
 * request bodies and query parameters are generated from the joi schemas the routes validate
 * with (joi-to-json), the answers come from ./response-schemas, and each operation lists the
 * error codes it can answer with under each HTTP status.
 */

type Schema = Record<string, unknown>;
type Scope = 'payments' | 'merchants';
type ErrorStatus = 400 | 404 | 422 | 500 | 502;

interface PathParameter {
  name: string;
  description: string;
  example: string;
}

interface Operation {
  method: 'get' | 'post';
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** The scope an app needs (SPEC §2). */
  scope: Scope;
  pathParameters?: PathParameter[];
  query?: Joi.ObjectSchema;
  /** A JSON body, named under components.schemas. */
  body?: { name: string; schema: Joi.Schema; required: boolean };
  multipart?: Schema;
  /** The success data, by name under components.schemas; null for `data: null`. */
  data: string | null;
  /** The error codes this operation answers with, by status (authentication's are added). */
  errors: Partial<Record<ErrorStatus, DocumentedErrorCode[]>>;
}

/** A realistic message for each code, for the documented examples. */
const EXAMPLE_MESSAGES: Record<DocumentedErrorCode, string> = {
  invalid_param: '"amount" must be greater than or equal to 1',
  missing_param: 'trade_no is required',
  invalid_pay_method: 'pay_method card is not supported by channel sandbox',
  invalid_amount: "amount exceeds the channel's limit of 100000000",
  unauthorized: 'signature does not verify',
  app_not_found: 'app not found',
  permission_denied: 'the app lacks the payments scope',
  order_not_found: 'order not found',
  order_already_paid: 'order already paid',
  order_closed: 'order closed',
  refund_amount_exceed: 'refund amount exceeds the refundable amount',
  sharing_amount_exceed: 'profit_sharing_amount exceeds amount',
  order_not_paid: 'order not paid',
  sharing_not_config: 'profit sharing is not configured: the order needs a merchant with receivers',
  sharing_fee_exceed: 'profit_sharing_amount exceeds 30 (max_ratio 0.3 of amount)',
  refund_not_found: 'refund not found',
  channel_create_fail: 'the channel refused the order: ORDER_EXISTS',
  channel_refund_fail: 'the channel refused the refund: NOT_ENOUGH',
  channel_timeout: 'the channel did not answer within the request deadline',
  channel_not_support: 'channel paypal is not supported',
  channel_verify_fail: 'the channel answer does not verify',
  internal_system: 'internal system error',
  database_error: 'merchant_id already exists',
  rate_limited: 'rate limit exceeded: 100 requests per second',
  not_found: 'no route for GET /api/v1/pay/querry/P1',
  notification_not_found: 'notification not found',
};

/** What every signed endpoint may answer besides its own codes (SPEC §2, §1). */
const AUTH_ERRORS: Record<401 | 403 | 429, DocumentedErrorCode[]> = {
  401: ['unauthorized', 'app_not_found'],
  403: ['permission_denied'],
  429: ['rate_limited'],
};

const STATUS_DESCRIPTIONS: Record<number, string> = {
  200: 'Success.',
  400: 'The request is malformed: a body that is not JSON, over 1 MiB or compressed, a field that fails validation (the message names it), a bad path value.',
  401: "The request's signature does not verify, or names no app (SPEC §2).",
  403: 'The app is disabled or lacks the scope.',
  404: 'Not found.',
  422: 'The request is well formed but the business state refuses it.',
  429: 'The app exceeded its request rate (100/s, burst 200 by default).',
  500: 'durapay failed; the message never carries a stack trace or SQL text.',
  502: 'The channel refused, is not supported, or did not answer within the request deadline (10 s).',
  503: 'Not ready.',
};

const tradeNoParameter: PathParameter = {
  name: 'tradeNo',
  description: 'The order\'s `trade_no`. Empty: `400 missing_param`, "trade_no is required".',
  example: 'P202611220531020000000042',
};
const merchantIdParameter: PathParameter = {
  name: 'merchantID',
  description: 'The `merchant_id` you gave the merchant (case kept).',
  example: 'shop-001',
};

const OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/api/v1/pay/unified-order',
    operationId: 'createOrder',
    tag: 'Payments',
    summary: 'Create a payment order',
    description:
      'Creates the order at the channel and returns what the buyer pays with (SPEC §3.1). Idempotent on `(app, merchant_order_no)`: a repeat of a pending order returns the same `trade_no` with `is_idempotent: true` and calls the channel no more; one that is paid or refunded answers `422 order_already_paid`, one closed `422 order_closed`. A create the channel refused leaves no order behind.',
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
      "Reads the order as durapay has recorded it (SPEC §3.3). Another app's order answers as if it did not exist.",
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
      'Closes the order at the channel (SPEC §3.4). Closing a closed order succeeds again. If the channel reports the order paid while closing, it becomes `paid` and the answer is `422 order_already_paid`.',
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
  {
    method: 'post',
    path: '/api/v1/pay/refund',
    operationId: 'refund',
    tag: 'Payments',
    summary: 'Refund a paid order',
    description:
      'Starts a refund (SPEC §3.5); its final status arrives by callback or polling and is posted to `notify_url`. Refunds of one order are serialized. A refund the channel did not answer (`502 channel_timeout`) keeps its amount reserved: send it again with the same `merchant_refund_no` to learn how it ended.',
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
      "Asks the channel to pay an `abnormal` refund (the buyer's account could not take it) to a bank card instead (SPEC §3.5; WeChat Pay 发起异常退款). The bank account and name are sent sealed with the channel's key and never stored. The refund stays `abnormal` until the channel pays it out, then becomes `success` and `refund.succeeded` is posted. A refund that is not abnormal: `400 invalid_param`.",
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
    description: 'Reads the refund as durapay has recorded it (SPEC §3.6).',
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
  {
    method: 'post',
    path: '/api/v1/merchant',
    operationId: 'createMerchant',
    tag: 'Merchants',
    summary: 'Create a merchant',
    description:
      'Records a merchant of this app (SPEC §5.1). Any failure of the creation, a duplicate `merchant_id` included, is `500 database_error` with a clean message.',
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
    description: 'Newest first (SPEC §5.3); `limit` and `offset` in the answer are the values used.',
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
      'Forwards a document to the channel and returns its `file_id` (SPEC §5.5). Sign it like any request: `Content-Digest` covers the multipart body as sent. Only the base name of the file name is forwarded; durapay keeps the file id, media type, size and SHA-256, never the content.',
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
    description: 'The merchant record, bank account masked (SPEC §5.4).',
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    data: 'Merchant',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'], 500: ['database_error'] },
  },
  {
    method: 'post',
    path: '/api/v1/merchant/{merchantID}/apply',
    operationId: 'applyForMerchant',
    tag: 'Merchants',
    summary: 'Apply for onboarding at a channel',
    description:
      "Starts an onboarding application (SPEC §5.6), followed by polling until it is final; each change is posted to `notify_url`. While the merchant's application at this channel is not final, applying again returns its `application_id` and submits nothing.",
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    body: { name: 'ApplyRequest', schema: applySchema, required: true },
    data: 'CreatedApplication',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'], 500: ['internal_system'] },
  },
  {
    method: 'get',
    path: '/api/v1/merchant/{merchantID}/audit',
    operationId: 'getMerchantAudit',
    tag: 'Merchants',
    summary: "Read the merchant's latest application",
    description:
      'The latest application and its audit state (SPEC §5.7). A merchant without an application is `404 order_not_found`, "application not found".',
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    data: 'Application',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'] },
  },
  {
    method: 'get',
    path: '/api/v1/notifications',
    operationId: 'listNotifications',
    tag: 'Notifications',
    summary: 'List notifications with their attempts',
    description: 'Newest first, with every recorded delivery attempt (SPEC §6).',
    scope: 'payments',
    query: listNotificationsQuery,
    data: 'NotificationPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'post',
    path: '/api/v1/notifications/{notificationId}/resend',
    operationId: 'resendNotification',
    tag: 'Notifications',
    summary: 'Deliver a notification again',
    description: 'Starts a fresh series of attempts with the same `webhook-id` (SPEC §6).',
    scope: 'payments',
    pathParameters: [
      {
        name: 'notificationId',
        description: 'The `notification_id`.',
        example: 'ntf_01JD4W6Y7Z8A9B0C1D2E3F4G5H',
      },
    ],
    body: { name: 'ResendNotificationRequest', schema: resendNotificationBody, required: false },
    data: 'ResentNotification',
    errors: { 400: ['invalid_param'], 404: ['notification_not_found'] },
  },
];

function errorExamples(codes: readonly DocumentedErrorCode[]): Schema {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: code,
        value: { code, message: EXAMPLE_MESSAGES[code], data: null, request_id: 'req_01JD4W6Y7Z' },
      },
    ]),
  );
}

function jsonResponse(description: string, schema: Schema, examples?: Schema): Schema {
  return {
    description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: { 'application/json': { schema, ...(examples ? { examples } : {}) } },
  };
}

function errorResponse(status: number, codes: readonly DocumentedErrorCode[]): Schema {
  return jsonResponse(
    `${STATUS_DESCRIPTIONS[status] ?? ''} Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    errorEnvelope(codes),
    errorExamples(codes),
  );
}

/** Each query parameter of a joi object, with its generated schema. */
function queryParameters(query: Joi.ObjectSchema): Schema[] {
  const generated = parse(query, 'open-api-3.1') as {
    properties: Record<string, Schema>;
    required?: string[];
  };
  return Object.entries(generated.properties).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return {
      name,
      in: 'query',
      required: generated.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

function operationObject(op: Operation, requestBodies: Record<string, Schema>): Schema {
  const responses: Record<string, Schema> = {
    200: jsonResponse(STATUS_DESCRIPTIONS[200]!, successEnvelope(op.data ? schemaRef(op.data) : null)),
  };
  const errors: Partial<Record<number, DocumentedErrorCode[]>> = { ...op.errors };
  for (const [status, codes] of Object.entries(AUTH_ERRORS)) errors[Number(status)] = codes;
  errors[500] = [...new Set<DocumentedErrorCode>(['internal_system', ...(errors[500] ?? [])])];
  for (const status of Object.keys(errors).map(Number).sort()) {
    responses[status] = errorResponse(status, errors[status]!);
  }
  const parameters = [
    ...(op.pathParameters ?? []).map((p) => ({
      name: p.name,
      in: 'path',
      required: true,
      description: p.description,
      schema: { type: 'string' },
      example: p.example,
    })),
    ...(op.query ? queryParameters(op.query) : []),
  ];
  let requestBody: Schema | undefined;
  if (op.body) {
    requestBodies[op.body.name] = parse(op.body.schema, 'open-api-3.1') as Schema;
    requestBody = {
      required: op.body.required,
      content: { 'application/json': { schema: schemaRef(op.body.name) } },
    };
  } else if (op.multipart) {
    requestBody = { required: true, content: { 'multipart/form-data': { schema: op.multipart } } };
  }
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: `${op.description}\n\nScope: \`${op.scope}\`.`,
    security: [{ httpMessageSignature: [op.scope] }],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** The channel callback (SPEC §4): plain text both ways, never the envelope. */
const callbackOperation: Schema = {
  operationId: 'channelCallback',
  tags: ['Channel callbacks'],
  summary: 'Receive a channel callback',
  description:
    "Called by the upstream channel, not by apps. The body (at most 64 KiB for WeChat Pay and Alipay, 1 MiB for others) is read raw and verified with the channel's own signature; the event is durably recorded and delivered to the order before it is acknowledged. Any failure (unknown channel, body too large, bad signature, stale timestamp, unknown order, amount mismatch) answers `200 fail`; a source address past its limit of callbacks that failed verification (50 a second unless configured) is answered `200 fail` without its body being read. Callbacks of an unknown channel or too large are not stored; the others are kept for the retention (90 days unless configured).",
  security: [],
  parameters: [
    {
      name: 'channelCode',
      in: 'path',
      required: true,
      description: '`sandbox`, `wechatpay` or `alipay`.',
      schema: { type: 'string' },
      example: 'sandbox',
    },
  ],
  requestBody: {
    required: true,
    content: { '*/*': { schema: { type: 'string' } } },
  },
  responses: {
    200: {
      description:
        'The channel\'s acknowledgement (sandbox and Alipay `success`; WeChat Pay `{"code":"SUCCESS","message":"成功"}`), or `fail`.',
      content: {
        'text/plain': {
          schema: { type: 'string' },
          examples: { ok: { value: 'success' }, fail: { value: 'fail' } },
        },
      },
    },
  },
};

function plainOperation(
  operationId: string,
  summary: string,
  description: string,
  responses: Schema,
): Schema {
  return { operationId, tags: ['Operations'], summary, description, security: [], responses };
}

/** A resource as its query endpoint returns it, plus the `app_id` a notification adds. */
function withAppId(resource: string): Schema {
  const schema = DATA_SCHEMAS[resource] as { required: string[]; properties: Record<string, Schema> };
  return {
    ...schema,
    description: `The ${resource.toLowerCase()} as its query endpoint returns it, plus \`app_id\`.`,
    required: [...schema.required, 'app_id'],
    properties: { ...schema.properties, app_id: { type: 'string', examples: ['app_abcdefghijklmnop'] } },
  };
}

/** SPEC §6: what durapay posts to a `notify_url`. */
function webhooks(): Schema {
  const events: [string, string, string][] = [
    ['payment.succeeded', 'Order', 'An order was paid.'],
    ['payment.closed', 'Order', 'An order was closed, by request or at its expiry.'],
    ['refund.succeeded', 'Refund', 'A refund succeeded.'],
    ['refund.failed', 'Refund', 'A refund failed; its amount is refundable again.'],
    [
      'refund.abnormal',
      'Refund',
      "A refund's money left the order but the buyer's account could not take it: pay it out another way.",
    ],
    ['merchant.application.updated', 'Application', 'An onboarding application changed.'],
  ];
  const header = (name: string, description: string, example: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
    example,
  });
  return Object.fromEntries(
    events.map(([type, resource, description]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/\./g, '_')}`,
          tags: ['Notifications'],
          summary: type,
          description: `${description} Delivered when any 2xx answers within 10 s (redirects are not followed); otherwise retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed. Verify with any Standard Webhooks library and the app's \`webhook_secret\`.`,
          parameters: [
            header(
              'webhook-id',
              "The notification's id, the same on every retry.",
              'ntf_01JD4W6Y7Z8A9B0C1D2E3F4G5H',
            ),
            header('webhook-timestamp', 'Unix seconds of this attempt.', '1763789462'),
            header(
              'webhook-signature',
              "`v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` under the base64-decoded part of the app's `webhook_secret` after `whsec_`.",
              'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            ),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'data'],
                  properties: {
                    type: { const: type },
                    timestamp: { type: 'string', format: 'date-time' },
                    data: withAppId(resource),
                  },
                },
              },
            },
          },
          responses: { '2XX': { description: 'Delivered.' } },
        },
      },
    ]),
  );
}

export interface OpenApiOptions {
  /** The package's version. */
  version: string;
}

/** The document served at `GET /openapi.json`. */
export function buildOpenApiDocument(opts: OpenApiOptions): Schema {
  const requestBodies: Record<string, Schema> = {};
  const paths: Record<string, Record<string, Schema>> = {};
  for (const op of OPERATIONS) {
    (paths[op.path] ??= {})[op.method] = operationObject(op, requestBodies);
  }
  paths['/api/v1/notify/payment/{channelCode}'] = { post: callbackOperation };
  paths['/livez'] = {
    get: plainOperation('livez', 'Liveness', 'Answers 200 while the process is alive (SPEC §9).', {
      200: jsonResponse('Alive.', successEnvelope(schemaRef('Alive'))),
    }),
  };
  paths['/healthz'] = {
    get: plainOperation(
      'healthz',
      'Liveness (as /livez)',
      'The same as `/livez`, kept for probes that use it.',
      {
        200: jsonResponse('Alive.', successEnvelope(schemaRef('Alive'))),
      },
    ),
  };
  paths['/readyz'] = {
    get: plainOperation(
      'readyz',
      'Readiness',
      'Answers 200 when Postgres and Temporal both answer; otherwise 503 naming each dependency that does not (`not ready: database down`), and nothing of why.',
      {
        200: jsonResponse('Ready.', successEnvelope(schemaRef('Ready'))),
        503: errorResponse(503, ['internal_system']),
      },
    ),
  };
  paths['/metrics'] = {
    get: plainOperation(
      'metrics',
      'Prometheus metrics',
      "The API process's metrics in the text exposition format. Outside production the API port serves them to anyone; in production only with `Authorization: Bearer <METRICS_TOKEN>` when that is set, and otherwise not at all (an unknown route, `404 not_found`): they are on `METRICS_PORT` (9100) instead.",
      {
        200: { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
        401: errorResponse(401, ['unauthorized']),
      },
    ),
  };
  paths['/openapi.json'] = {
    get: plainOperation('openapi', 'This document', 'The OpenAPI 3.1 description of the API.', {
      200: { description: 'This document.', content: { 'application/json': { schema: { type: 'object' } } } },
    }),
  };
  const payloads = {
    type: 'object',
    required: ['payloads'],
    properties: {
      payloads: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            metadata: {
              type: 'object',
              additionalProperties: { type: 'string', contentEncoding: 'base64' },
              description:
                'Each value base64; a sealed payload has `encoding: binary/encrypted` and `encryption-key-id`.',
            },
            data: { type: 'string', contentEncoding: 'base64' },
          },
        },
      },
    },
  };
  const codecOperation = (op: 'decode' | 'encode'): Schema => ({
    operationId: `codec${op === 'decode' ? 'Decode' : 'Encode'}`,
    tags: ['Codec server'],
    summary: op === 'decode' ? 'Decode workflow payloads' : 'Encode workflow payloads',
    description:
      op === 'decode'
        ? "Opens sealed payloads for the Temporal UI or `temporal workflow show --codec-endpoint …/codec --codec-auth 'Bearer <token>'`; payloads that are not sealed come back unchanged."
        : 'Seals payloads (what an operator sends from the UI, a signal for instance) with the current payload key.',
    security: [{ codecToken: [] }, { codecSession: [] }],
    parameters: [
      {
        name: 'X-Namespace',
        in: 'header',
        required: false,
        description: 'The Temporal namespace the payloads belong to (the UI sends it).',
        schema: { type: 'string' },
      },
    ],
    requestBody: { required: true, content: { 'application/json': { schema: payloads } } },
    responses: {
      200: {
        description: 'The payloads, in the same order.',
        content: { 'application/json': { schema: payloads } },
      },
      400: errorResponse(400, ['invalid_param']),
      401: errorResponse(401, ['unauthorized']),
      403: errorResponse(403, ['permission_denied']),
      429: errorResponse(429, ['rate_limited']),
      500: errorResponse(500, ['internal_system']),
    },
  });
  const preflight = (op: string): Schema => ({
    operationId: `codec${op}Preflight`,
    tags: ['Codec server'],
    summary: 'CORS preflight',
    description:
      "Answers the Temporal UI's preflight when its origin is one of `DURAPAY_CODEC_CORS_ORIGINS`.",
    security: [],
    responses: {
      204: { description: 'Allowed: `Access-Control-Allow-*` headers name the methods, headers and origin.' },
      403: errorResponse(403, ['permission_denied']),
    },
  });
  const html = (description: string): Schema => ({
    description,
    content: { 'text/html': { schema: { type: 'string' } } },
  });
  paths['/codec/decode'] = { post: codecOperation('decode'), options: preflight('Decode') };
  paths['/codec/encode'] = { post: codecOperation('encode'), options: preflight('Encode') };
  paths['/codec/login'] = {
    get: {
      operationId: 'codecLoginPage',
      tags: ['Codec server'],
      summary: 'Operator sign-in page',
      description:
        'A form for the codec token; signing in sets the session cookie the Temporal UI sends with "Include cross-origin credentials".',
      security: [],
      responses: { 200: html('The page.') },
    },
  };
  paths['/codec/session'] = {
    post: {
      operationId: 'codecSignIn',
      tags: ['Codec server'],
      summary: 'Sign in with the codec token',
      description:
        'Sets `durapay_codec` (HttpOnly, SameSite=Strict, path /codec, 12 hours), derived from the token: a new token ends every session. Ten wrong tokens a minute from one address are refused.',
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } },
          },
        },
      },
      responses: {
        200: html('Signed in; the page says how to point the UI here.'),
        401: html('Not the codec token.'),
        403: html('The codec server is off (no DURAPAY_CODEC_TOKEN).'),
        429: html('Too many wrong tokens from this address in a minute.'),
      },
    },
  };
  paths['/codec/logout'] = {
    post: {
      operationId: 'codecSignOut',
      tags: ['Codec server'],
      summary: 'Sign out',
      description: 'Clears the session cookie.',
      security: [],
      responses: { 204: { description: 'Signed out.' } },
    },
  };
  paths['/docs'] = {
    get: plainOperation('docs', 'API reference', 'This document rendered as a page (Redoc).', {
      200: { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } },
    }),
  };

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'durapay',
      version: opts.version,
      summary: 'A payment gateway whose orders, refunds, onboarding and notifications are durable workflows.',
      description: [
        'Every answer is the envelope `{"code", "message", "data", "request_id"}`: success is HTTP 200 with `code: "success"`; a failure has `data: null` and an HTTP status by category. Every response carries `X-Request-Id` (yours when it is 1–128 characters of `[A-Za-z0-9._-]`).',
        '',
        'Validation is strict: no type coercion (`"amount": "100"` is invalid), unknown fields are refused, and the message names the field. A body that is not JSON, larger than 1 MiB or compressed is `400 invalid_param`; an unknown route is `404 not_found` (or `401` under a signed prefix, checked first). Times are RFC 3339 in UTC with milliseconds; money is an integer count of minor units (fen for CNY).',
        '',
        '**Signatures.** Every `/api/v1/pay`, `/api/v1/merchant` and `/api/v1/notifications` request is signed with HTTP Message Signatures (RFC 9421), `hmac-sha256`, keyed by the UTF-8 bytes of the app secret: `Signature-Input: sig1=("@method" "@path" "@query" "content-digest");created=…;nonce="…";keyid="app_…";alg="hmac-sha256"`, `Signature: sig1=:…:`, and `Content-Digest: sha-256=:…:` (RFC 9530) on every request with a body. `created` within ±300 s; a `nonce` (8–128 characters) is accepted once per app within 10 minutes. `npx durapay sign` prints these headers for curl.',
      ].join('\n'),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'This durapay API.' }],
    tags: [
      { name: 'Payments', description: 'Orders and refunds (SPEC §3).' },
      { name: 'Merchants', description: 'Merchants and onboarding (SPEC §5).' },
      {
        name: 'Notifications',
        description: 'Standard Webhooks notifications to your `notify_url` (SPEC §6).',
      },
      { name: 'Channel callbacks', description: 'Called by payment channels (SPEC §4).' },
      { name: 'Operations', description: 'Health, readiness, metrics and this document.' },
      {
        name: 'Codec server',
        description:
          'For operators: the Temporal UI decodes the sealed workflow payloads through these (SPEC §7). Each call needs the codec token.',
      },
    ],
    paths,
    webhooks: webhooks(),
    components: {
      securitySchemes: {
        codecToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'The operator token, DURAPAY_CODEC_TOKEN.',
        },
        codecSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'durapay_codec',
          description: 'The session `POST /codec/session` sets.',
        },
        httpMessageSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'Signature',
          description:
            'RFC 9421 HTTP Message Signatures with `hmac-sha256`, together with `Signature-Input` and, on a request with a body, `Content-Digest` (see the introduction). Scopes: `payments` (`/api/v1/pay/*`, `/api/v1/notifications*`), `merchants` (`/api/v1/merchant*`).',
        },
      },
      headers: {
        'X-Request-Id': { description: 'The request id.', schema: schemaRef('RequestId') },
      },
      schemas: { ...ENVELOPE_SCHEMAS, ...DATA_SCHEMAS, ...requestBodies },
    },
  };
}
