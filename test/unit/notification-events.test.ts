/**
 * The notification event types are one list, NOTIFICATION_EVENTS (modules/notifications/rules.ts).
 * The OpenAPI document derives its enums and webhooks from it; the two copies that may not import
 * the gateway's modules are checked against it here: the SDK's type (the SDK imports only the
 * platform; test/unit/sdk-openapi.test.ts also checks it against the document) and the console's
 * menu (the console reaches the gateway only over its JSON API).
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import ts from 'typescript';
import { buildOpenApiDocument } from '../../src/api/openapi/document';
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
 * The console's options module (console/src/options.ts, an ES module of the console's package,
 * importing nothing), compiled and run on its own.
 */
function consoleOptions(): { NOTIFICATION_EVENTS: readonly string[] } {
  const file = path.join(__dirname, '..', '..', 'console', 'src', 'options.ts');
  const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
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
