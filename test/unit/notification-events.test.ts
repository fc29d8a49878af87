/**
 * The notification event types are one list, NOTIFICATION_EVENTS (modules/notifications/rules.ts).
 * The OpenAPI document derives its enums and webhooks from it; the two copies that may not import
 * the gateway's modules are checked against it here: the SDK's type (the SDK imports only the
 * platform; test/unit/sdk-openapi.test.ts also checks it against the document) and the console's
 * menu (the console reaches the gateway only over its JSON API, and its menus are generated from
 * the console's API document: console/src/api/generated/lists.ts, as src/cli/dev/console-api.ts
 * writes it).
 */
import vm from 'node:vm';
import ts from 'typescript';
import { buildConsoleDocument } from '../../src/api/openapi/console-document';
import { buildOpenApiDocument } from '../../src/api/openapi/document';
import { consoleLists } from '../../src/cli/dev/console-api';
import { NOTIFICATION_EVENTS, type NotificationEvent } from '../../src/modules/notifications';
import type { NotificationEventType } from '../../src/sdk';

/** Exactly the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

test("when the SDK's event type is compared with the list, then it is the same union (checked when the tests compile)", () => {
  // `npm run typecheck` compiles this line; it does not compile when the SDK's union differs.
  const sdkEventsAreTheList: Same<NotificationEventType, NotificationEvent> = true;
  expect(sdkEventsAreTheList).toBe(true);
});

/**
 * The console's lists module (console/src/api/generated/lists.ts, an ES module of the console's
 * package, importing nothing), as the console's build writes it, compiled and run on its own.
 */
function consoleOptions(): { NOTIFICATION_EVENTS: readonly string[] } {
  const source = consoleLists(buildConsoleDocument({ version: '0.0.0' }));
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const module = { exports: {} as Record<string, unknown> };
  vm.runInNewContext(outputText, { module, exports: module.exports });
  return module.exports as { NOTIFICATION_EVENTS: readonly string[] };
}

test("when the console's event menu is compared with the list, then it holds the same events in the same order", () => {
  expect([...consoleOptions().NOTIFICATION_EVENTS]).toEqual([...NOTIFICATION_EVENTS]);
});

test('when the OpenAPI document is built, then its event enums and webhooks are the list', () => {
  const document = buildOpenApiDocument({ version: '0.0.0' }) as {
    webhooks: Record<string, unknown>;
    components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> };
  };
  const notification = document.components.schemas.Notification!.properties;
  expect(notification.type!.enum).toEqual([...NOTIFICATION_EVENTS]);
  expect(Object.keys(document.webhooks)).toEqual([...NOTIFICATION_EVENTS]);
});
