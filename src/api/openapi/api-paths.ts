import { errorResponse, jsonResponse } from './responses';
import { schemaRef, successEnvelope } from './response-schemas';

// The paths that belong to the API itself rather than to a module: the channel callback, the
// probes, metrics, this document and its page, and the codec server.

type Schema = Record<string, unknown>;

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

/** A channel's complaint notification (SPEC §16): as a callback, plain text both ways. */
const complaintNotificationOperation: Schema = {
  ...callbackOperation,
  operationId: 'complaintNotification',
  summary: 'Receive a complaint notification',
  description:
    "Called by the upstream channel, not by apps: WeChat Pay's 消费者投诉2.0 notification (`COMPLAINT.*`, JSON, which durapay registers at start; verified with the channel's signature and decrypted with the account's APIv3 key) or Alipay's `alipay.merchant.tradecomplain.changed` message (a form, RSA2, posted to the app's gateway URL set in Alipay's console). The body is at most 64 KiB and says only which complaint changed; the complaint's workflow reads the complaint back from the channel before the channel is answered. Any failure answers the channel's failure reply, and the channel sends it again.",
  parameters: [
    {
      ...(callbackOperation.parameters as Schema[])[0],
      description: '`wechatpay` or `alipay`.',
      example: 'wechatpay',
    },
  ],
};

/** A channel's contract notification (SPEC §17): signed by the buyer, or ended at the channel. */
const contractNotificationOperation: Schema = {
  ...callbackOperation,
  operationId: 'contractNotification',
  summary: 'Receive a contract notification',
  description:
    "Called by the upstream channel, not by apps: a recurring contract was signed by the buyer or ended at the channel (the buyer unsigned). Verified with the channel's signature; the body is at most 64 KiB. The contract's workflow is signalled before the channel is answered; any failure answers the channel's failure reply, and the channel sends it again. A lost notification is found by the contract's own queries of the channel.",
  parameters: [
    {
      ...(callbackOperation.parameters as Schema[])[0],
      description: '`sandbox` (and, as they are added, the channels with contracts).',
      example: 'sandbox',
    },
  ],
};

function plainOperation(
  operationId: string,
  summary: string,
  description: string,
  responses: Schema,
): Schema {
  return { operationId, tags: ['Operations'], summary, description, security: [], responses };
}

/** The API's own paths, in the document's order (after the modules' operations). */
export function apiPaths(): Record<string, Record<string, Schema>> {
  const paths: Record<string, Record<string, Schema>> = {};
  paths['/api/v1/notify/payment/{channelCode}'] = { post: callbackOperation };
  paths['/api/v1/notify/complaint/{channelCode}'] = { post: complaintNotificationOperation };
  paths['/api/v1/notify/contract/{channelCode}'] = { post: contractNotificationOperation };
  paths['/livez'] = {
    get: plainOperation('livez', 'Liveness', 'Answers 200 while the process is alive.', {
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
  paths['/console/openapi.json'] = {
    get: plainOperation(
      'consoleOpenapi',
      "The operator console's API document",
      "The OpenAPI 3.1 description of the operator console's JSON API (`/console/api`), which the console's client types are generated from.",
      {
        200: {
          description: 'That document.',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    ),
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
  paths['/api/v1/channels/alipay/app-auth'] = {
    get: {
      operationId: 'alipayAppAuthReturn',
      tags: ['Merchants'],
      summary: "Alipay's return from a merchant's authorisation",
      description:
        "Where Alipay sends the merchant's browser after it authorised this app (`app_id`, `app_auth_code`, `state`), from the page `POST /api/v1/merchant/{merchantID}/channel-accounts/alipay/authorization` answered. No app signs it: the state, single use and an hour old at most, says which app and merchant it is for. durapay exchanges the code, saves the token sealed as the merchant's Alipay account, and sends the browser on to the authorisation's `redirect_url` (with `merchant_id`, `channel_code=alipay`, `result=authorized`) or shows that it is saved. A forged, used or expired state, a cancelled authorisation or a code Alipay refuses: a page saying so, and nothing saved.",
      security: [],
      parameters: ['app_id', 'app_auth_code', 'state', 'source', 'error'].map((name) => ({
        name,
        in: 'query',
        required: false,
        schema: { type: 'string' },
      })),
      responses: {
        200: html('Saved (no redirect_url was given).'),
        303: { description: 'Saved: on to the redirect_url.' },
        400: html(
          'A forged, used or expired state, a cancelled authorisation, or a code Alipay refused: nothing saved.',
        ),
        500: html('durapay could not save it: nothing saved.'),
        502: html('Alipay did not answer: nothing saved.'),
      },
    },
  };
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
  return paths;
}
