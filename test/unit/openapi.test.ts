import { createApp } from '../../src/api/app';
import { buildOpenApiDocument } from '../../src/api/openapi/document';
import { ERROR_CODES } from '../../src/api/openapi/response-schemas';
import { ERROR_STATUS } from '../../src/platform/errors';
import { createLogger } from '../../src/platform/logger';
import { validateOpenApi } from '../support/openapi-validator';

type Json = Record<string, unknown>;
const document = buildOpenApiDocument({ version: '1.2.3' });
const paths = document.paths as Record<string, Record<string, Json>>;

/** Each operation of the document as `METHOD /path/{param}`. */
function documentedOperations(): string[] {
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
  );
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  match?: (path: string) => boolean;
}

/** The console's API (mounted at /console/api): its page's own, documented in docs/console.md. */
const isConsoleMount = (layer: Layer) =>
  !!layer.match && layer.match('/console/api/x') && !layer.match('/api/v1/x');

/** Each route the Express app serves, in the document's notation (`:id` → `{id}`). */
function routedOperations(): string[] {
  // Building the app touches none of its dependencies; only a request would.
  const app = createApp({
    logger: createLogger({ level: 'error' }),
    readiness: {} as never,
    auth: {} as never,
    services: {} as never,
    codec: {
      codec: {} as never,
      corsOrigins: [],
      secureCookie: false,
      logger: createLogger({ level: 'error' }),
    },
  });
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const patterns = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        // Of `/query` and `/query/:tradeNo`, the one with the parameter (the other is its empty form).
        const pattern = patterns.reduce((a, b) => (b.split(':').length > a.split(':').length ? b : a));
        const path = pattern.replace(/\{\/:(\w+)\}/g, '/{$1}').replace(/:(\w+)/g, '{$1}');
        for (const method of Object.keys(layer.route.methods)) found.push(`${method.toUpperCase()} ${path}`);
      } else if (layer.handle?.stack && !isConsoleMount(layer)) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  // The console's page and its API (/console, /console/…) are not the apps' API either (its API
  // has a document of its own, test/unit/console-openapi.test.ts); the document of it is. Nor are
  // the buyer's checkout pages (/checkout/…: HTML for a browser, docs/payment-links.md).
  return found.filter(
    (op) =>
      !op.startsWith('GET /docs/') &&
      !/^\w+ \/checkout\//.test(op) &&
      (op === 'GET /console/openapi.json' || !/^\w+ \/console(\/|$)/.test(op)),
  );
}

describe('the OpenAPI document', () => {
  test('when it is validated against the OpenAPI 3.1 schema, then it is valid', () => {
    expect(validateOpenApi(document)).toEqual({ valid: true, version: '3.1' });
    expect((document.info as Json).version).toBe('1.2.3');
  });

  test('when a document breaks the OpenAPI schema, then the validator says so', () => {
    // The check can fail: a response without a description is not OpenAPI.
    const broken = structuredClone(document) as {
      paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
    };
    delete broken.paths['/api/v1/pay/close']!.post!.responses['200']!.description;
    expect(validateOpenApi(broken).valid).toBe(false);
  });

  test('when its operations are compared with the routes the app serves, then each route is documented and each operation routed', () => {
    expect(documentedOperations().sort()).toEqual(routedOperations().sort());
  });

  test('when a request body is generated from its joi schema, then the schema keeps the field rules, descriptions and examples', () => {
    const schemas = (document.components as Json).schemas as Record<string, Json>;
    const create = schemas.CreateOrderRequest as {
      required: string[];
      properties: Record<string, Json>;
      additionalProperties: boolean;
    };
    expect(create.additionalProperties).toBe(false);
    expect(create.required.sort()).toEqual([
      'amount',
      'merchant_order_no',
      'notify_url',
      'pay_method',
      'subject',
    ]);
    expect(create.properties.amount).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000_000_000,
      examples: [100],
    });
    expect(create.properties.expire_minutes).toMatchObject({ minimum: 1, maximum: 1440 });
    expect(create.properties.merchant_order_no).toMatchObject({ pattern: '^[A-Za-z0-9_\\-|*.@]{1,64}$' });
    expect(create.properties.notify_url).toMatchObject({ format: 'uri', maxLength: 512 });
    expect(String(create.properties.profit_sharing_amount!.description)).toContain('sharing_fee_exceed');
    const refund = schemas.RefundRequest as { properties: Record<string, Json> };
    expect(refund.properties.reason).toMatchObject({ maxLength: 256 });
  });

  test("when every operation's error answers are read, then each code of SPEC appears and each one has its HTTP status", () => {
    const seen = new Map<string, Set<number>>();
    for (const item of Object.values(paths)) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
          const examples = ((response.content as Json | undefined)?.['application/json'] as Json | undefined)
            ?.examples as Record<string, { value: { code: string } }> | undefined;
          for (const example of Object.values(examples ?? {})) {
            if (!seen.has(example.value.code)) seen.set(example.value.code, new Set());
            seen.get(example.value.code)!.add(Number(status));
          }
        }
      }
    }
    // channel_verify_fail is a code of the seed that no endpoint answers: a callback that does not
    // verify is `200 fail` (SPEC §4).
    const answered = ERROR_CODES.filter((c) => c !== 'channel_verify_fail' && c !== 'not_found');
    expect([...seen.keys()].sort()).toEqual([...answered].sort());
    for (const [code, statuses] of seen) {
      // Each code under its category's status, except the SPEC's own exceptions (merchant and
      // application not found are 404; readiness is 503).
      const expected = new Set<number>([ERROR_STATUS[code as keyof typeof ERROR_STATUS]]);
      if (code === 'order_not_found') expected.add(404);
      if (code === 'internal_system') expected.add(503);
      expect([code, [...statuses].filter((s) => !expected.has(s as never))]).toEqual([code, []]);
    }
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  });

  test('when every text of the document is read, then none points at the contract, which its readers do not have', () => {
    const pointers: string[] = [];
    const walk = (value: unknown, at: string) => {
      if (typeof value === 'string') {
        if (/\bSPEC\b|§|\bseed\b/.test(value)) pointers.push(`${at}: ${value}`);
      } else if (value && typeof value === 'object') {
        for (const [key, inner] of Object.entries(value)) walk(inner, `${at}/${key}`);
      }
    };
    walk(document, '#');
    expect(pointers).toEqual([]);
  });
});
