export interface GlobalState {
  workDir: string;
  /** A URL of the test Postgres with rights to create databases. */
  adminUrl: string;
  /** A migrated database every test file clones (CREATE DATABASE … TEMPLATE). */
  template: string;
  temporalAddress: string;
  /** The dev server's Temporal UI, e.g. http://127.0.0.1:PORT (its workflows list at /namespaces/default/workflows). */
  temporalUiUrl: string;
  bundlePath: string;
  /** The payload keys every test stack and worker process seals with (DURAPAY_PAYLOAD_KEYS form). */
  payloadKeys: string;
  cliPath: string;
  /** Set when the tests started their own embedded Postgres. */
  pg?: { pid: number };
}

export function globalState(): GlobalState {
  const raw = process.env.DURAPAY_TEST_STATE;
  if (!raw) throw new Error('DURAPAY_TEST_STATE is not set: integration tests run through the global setup');
  return JSON.parse(raw) as GlobalState;
}
