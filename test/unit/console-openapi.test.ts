/**
 * The console's API document describes exactly the routes the console's API serves, and the
 * lists its client's menus are generated from are the server's own.
 */
import { buildConsoleDocument } from '../../src/api/openapi/console-document';
import { CONSOLE_LISTS } from '../../src/api/openapi/console-schemas';
import { CHANNEL_ACCOUNTS, CHANNEL_CODES } from '../../src/channels/registry';
import { consoleLists } from '../../src/cli/dev/console-api';
import {
  consoleCheckoutRoutes,
  consoleComplaintRoutes,
  consoleDataRoutes,
  consoleRoutes,
} from '../../src/modules/console';
import { OPERATOR_ROLES } from '../../src/modules/operators';
import { ORDER_STATUSES } from '../../src/modules/orders';
import { REFUND_STATUSES } from '../../src/modules/refunds';
import { validateOpenApi } from '../support/openapi-validator';

type Json = Record<string, unknown>;

/** Anything: the routers are only built here, never called. */
const stub: never = new Proxy({}, { get: () => stub }) as never;

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  rawPath?: string;
  handle?: { stack?: Layer[] };
}

/** Every route of a router and the routers mounted in it, as `METHOD /path` with OpenAPI's `{x}`. */
function routesOf(stack: Layer[], prefix = ''): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const path = `${prefix}${layer.route.path}`.replace(/:([A-Za-z]+)/g, '{$1}');
      return Object.keys(layer.route.methods).map((m) => `${m.toUpperCase()} ${path}`);
    }
    if (layer.handle?.stack) {
      return routesOf(layer.handle.stack, `${prefix}${layer.rawPath ?? ''}`.replace(/\/+$/, ''));
    }
    return [];
  });
}

const document = buildConsoleDocument({ version: '0.0.0' }) as {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
};

test('when the console API is built, then every route it serves is an operation of its document, and every operation a route', () => {
  const router = consoleRoutes({ db: stub, consoleSettings: stub, distDir: '/nowhere' } as never, [
    consoleDataRoutes({
      services: stub,
      orders: stub,
      refunds: stub,
      transfers: stub,
      reconciliation: stub,
      apps: stub,
    }),
    consoleCheckoutRoutes(stub),
    consoleComplaintRoutes(stub),
  ]) as unknown as { stack: Layer[] };
  const served = routesOf(router.stack)
    .filter((r) => r.includes('/console/api/'))
    .sort();
  const documented = Object.entries(document.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  expect(served.length).toBeGreaterThan(25);
  expect(documented).toEqual(served);
});

test("when the console's document is validated against the OpenAPI 3.1 schema, then it is valid", () => {
  expect(validateOpenApi(document)).toEqual({ valid: true, version: '3.1' });
});

test("when the console's document is built, then every operation answers a schema it has, and each error status lists codes", () => {
  for (const [path, ops] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const responses = op.responses as Record<string, { content: Record<string, { schema: Json }> }>;
      // A file (a code's printable PNG) answers its bytes, not the envelope.
      const json = responses['200']!.content['application/json'];
      if (!json) {
        expect({ path, method, types: Object.keys(responses['200']!.content) }).toEqual({
          path,
          method,
          types: ['image/png'],
        });
        expect(Object.keys(responses)).toContain('500');
        continue;
      }
      const data = (json.schema as { properties: { data: { $ref?: string } } }).properties.data;
      if (data.$ref) {
        const name = data.$ref.replace('#/components/schemas/', '');
        expect({ path, method, has: name in document.components.schemas }).toEqual({
          path,
          method,
          has: true,
        });
      }
      expect(Object.keys(responses)).toContain('500');
    }
  }
});

test("when the console's menus are generated, then their lists are the server's own, and each channel's fields its declaration", () => {
  const schemas = document.components.schemas;
  expect(schemas.OrderStatus!.enum).toEqual([...ORDER_STATUSES]);
  expect(schemas.RefundStatus!.enum).toEqual([...REFUND_STATUSES]);
  expect(schemas.OperatorRole!.enum).toEqual([...OPERATOR_ROLES]);
  expect(schemas.ChannelCode!.enum).toEqual([...CHANNEL_CODES]);
  const lists = consoleLists(document);
  for (const constant of Object.keys(CONSOLE_LISTS)) expect(lists).toContain(`export const ${constant} = `);
  expect(lists).toContain(`export const CHANNELS = ${JSON.stringify(CHANNEL_CODES)} as const;`);
  const fields = (
    schemas.AccountFields as { properties: Record<string, { properties: Record<string, Json> }> }
  ).properties;
  expect(Object.keys(fields)).toEqual(CHANNEL_ACCOUNTS.map((c) => c.code));
  for (const { code, accounts } of CHANNEL_ACCOUNTS) {
    expect(Object.entries(fields[code]!.properties).map(([name, f]) => [name, f.title])).toEqual(
      accounts.kinds.map((k) => [k.kind, k.label]),
    );
  }
});
