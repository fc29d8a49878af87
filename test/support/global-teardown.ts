import fs from 'node:fs';
import { Client } from 'pg';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { globalState } from './state';

export default async function globalTeardown(): Promise<void> {
  const state = globalState();
  const env = (globalThis as Record<string, unknown>).__durapayEnv as TestWorkflowEnvironment | undefined;
  await env?.teardown();

  if (state.pg) {
    // The embedded cluster goes with its data directory; nothing to drop.
    process.kill(state.pg.pid, 'SIGTERM');
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(state.pg.pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } else {
    const admin = new Client({ connectionString: state.adminUrl });
    await admin.connect();
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
      [state.template, `${state.template}_%`],
    );
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await admin.end();
  }
  fs.rmSync(state.workDir, { recursive: true, force: true });
}
