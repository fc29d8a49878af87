import { applicationOperations } from '../../modules/applications';
import { merchantOperations } from '../../modules/merchants';
import { notificationOperations } from '../../modules/notifications';
import { reconciliationOperations } from '../../modules/reconciliation';
import { paymentOperations } from '../../modules/orders';
import { refundOperations } from '../../modules/refunds';
import { transferOperations } from '../../modules/transfers';
import { merchantCodeOperations, paymentLinkOperations } from '../../modules/checkout';
import { complaintOperations } from '../../modules/complaints';
import { contractOperations } from '../../modules/contracts';
import { type ApiOperation } from '../../platform/http/openapi';
import { apiPaths } from './api-paths';
import { DATA_SCHEMAS, ENVELOPE_SCHEMAS, schemaRef } from './response-schemas';
import { describeOperation } from './operations';
import { AUTH_ERRORS, STATUS_DESCRIPTIONS } from './responses';
import { webhooks } from './webhooks';

/**
 * The OpenAPI 3.1 description of durapay's HTTP interface (SPEC §1–§6), built once at start:
 * request bodies and query parameters are generated from the joi schemas the routes validate
 * with (joi-to-json), the answers come from ./response-schemas, and each operation lists the
 * error codes it can answer with under each HTTP status. Each module describes its own
 * operations beside its routes (its openapi.ts); this file assembles them with the API's own
 * paths (./api-paths), the webhooks (./webhooks) and the shared answers (./responses).
 */

type Schema = Record<string, unknown>;

/** The signed endpoints, each module's beside its routes, in the order the contract lists them. */
const OPERATIONS: ApiOperation[] = [
  ...paymentOperations,
  ...refundOperations,
  ...merchantOperations,
  ...applicationOperations,
  ...notificationOperations,
  ...transferOperations,
  ...paymentLinkOperations,
  ...merchantCodeOperations,
  ...reconciliationOperations,
  ...complaintOperations,
  ...contractOperations,
];

function operationObject(op: ApiOperation, requestBodies: Record<string, Schema>): Schema {
  return describeOperation(op, requestBodies, {
    authErrors: AUTH_ERRORS,
    statusDescriptions: STATUS_DESCRIPTIONS,
    security: [{ httpMessageSignature: [op.scope] }],
    note: `Scope: \`${op.scope}\`.`,
  });
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
  Object.assign(paths, apiPaths());

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
      { name: 'Payments', description: 'Orders and refunds; every call needs the `payments` scope.' },
      {
        name: 'Payment links',
        description:
          "Links and QR codes that buyers pay on durapay's hosted checkout; every call needs the `payments` scope.",
      },
      {
        name: 'Complaints',
        description:
          "Consumer complaints about the app's orders (WeChat Pay 消费者投诉2.0): read them, reply, refund, complete; every call needs the `payments` scope.",
      },
      {
        name: 'Contracts',
        description:
          'Recurring contracts (auto-debit: WeChat Pay 委托代扣, Alipay 周期扣款): offered for the buyer to sign, then deducted each period as ordinary orders; every call needs the `payments` scope.',
      },
      {
        name: 'Merchants',
        description:
          'Merchants and their onboarding at the channels; every call needs the `merchants` scope.',
      },
      {
        name: 'Notifications',
        description:
          'Standard Webhooks notifications to your `notify_url`, retried until one answers 2xx, and the record of their attempts.',
      },
      {
        name: 'Channel callbacks',
        description:
          "Called by payment channels, not by apps: always answered 200, with the channel's acknowledgement or `fail`.",
      },
      { name: 'Operations', description: 'Health, readiness, metrics and this document.' },
      {
        name: 'Codec server',
        description:
          'For operators: workflow payloads are encrypted before they reach Temporal, and the Temporal UI decodes them through these. Each call needs the codec token.',
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
