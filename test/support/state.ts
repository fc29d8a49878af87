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
  /**
   * The checkout compiled once for the processes tests start (./compiled.ts): its root, laid out
   * as an installation, and its `durapay` executable.
   */
  compiled: { root: string; bin: string };
  /** Set when the tests started their own embedded Postgres. */
  pg?: { pid: number };
}

/**
 * The `durapay` executable the tests start processes of: the checkout compiled once for the run
 * (./compiled.ts), so that a process loads JavaScript instead of compiling the sources again.
 */
export function durapayBin(): string {
  return globalState().compiled.bin;
}

export function globalState(): GlobalState {
  const raw = process.env.DURAPAY_TEST_STATE;
  if (!raw) throw new Error('DURAPAY_TEST_STATE is not set: integration tests run through the global setup');
  return JSON.parse(raw) as GlobalState;
}
