/**
 * `durapay versions` run as an operator runs it, against both visibility stores it meets: the dev
 * server's SQLite (the test stack, whose worker runs real orders that ask the baseline marker)
 * and the production server's PostgreSQL (Temporal server 1.29.1, as docker-compose.yml runs it),
 * where a run that recorded no marker at all has no TemporalChangeVersion and `!=` alone leaves
 * it out. Runs that lack the marker are order runs on a task queue no worker polls: one that
 * never ran a workflow task (no marker, as a run of an older build), and ones started with the
 * TemporalChangeVersion a run of another build would have recorded.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { Client as PgClient } from 'pg';
import { cachedServerBinaries, startClusterServer } from '../../src/cli/dev/temporal-server';
import { loadConfig } from '../../src/config';
import { patches } from '../../src/modules/orders/messages';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { paymentsClient } from '../support/payments';
import { freePort } from '../support/ports';
import { Receiver } from '../support/receiver';
import { globalState, durapayBin } from '../support/state';
import { until } from '../support/wait';

jest.setTimeout(180_000);
const run = promisify(execFile);

/** The order workflow's baseline marker, as the code names it. */
const BASELINE = patches.orderBaseline;
/** A marker of some later change that the runs here did not record. */
const LATER = 'order-a-later-change';
const changeVersion = defineSearchAttributeKey('TemporalChangeVersion', SearchAttributeType.KEYWORD_LIST);

interface Row {
  workflow_type: string;
  marker: string;
  open_runs_lacking: number;
  open_runs: number;
}

function durapay(address: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [durapayBin(), ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: 'default',
      LOG_LEVEL: 'warn',
    },
    timeout: 60_000,
  });
}

/** The baseline's row of `durapay versions --json`. */
async function baselineRow(address: string, ...args: string[]): Promise<Row> {
  const { stdout } = await durapay(address, 'versions', '--json', ...args);
  const rows = stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
  const row = rows.find((r) => r.workflow_type === 'orderWorkflow' && r.marker === BASELINE);
  if (!row) throw new Error(`no row for the baseline in ${stdout}`);
  return row;
}

/**
 * Four order runs on a task queue no worker polls: one with no marker, one with the baseline,
 * one with only a later marker, one with both. Two of them lack the baseline.
 */
async function startUnpolledRuns(client: Client, taskQueue: string): Promise<void> {
  const markers: (string[] | undefined)[] = [undefined, [BASELINE], [LATER], [BASELINE, LATER]];
  for (const held of markers) {
    await client.workflow.start('orderWorkflow', {
      taskQueue,
      workflowId: uniqueName('versions'),
      args: [],
      workflowExecutionTimeout: '10 minutes',
      ...(held ? { typedSearchAttributes: [{ key: changeVersion, value: held }] } : {}),
    });
  }
}

/** Waits until visibility has every order run of the queue, by queries that do not use `!=`. */
async function visible(client: Client, taskQueue: string, open: number, withBaseline: number) {
  const onQueue = `WorkflowType = 'orderWorkflow' AND TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`;
  await until(`${open} open order runs on ${taskQueue}, ${withBaseline} with the baseline`, async () => {
    const all = (await client.workflow.count(onQueue)).count;
    const marked = (await client.workflow.count(`${onQueue} AND TemporalChangeVersion = '${BASELINE}'`))
      .count;
    return all === open && marked === withBaseline ? true : undefined;
  });
}

async function terminateOpenRuns(client: Client, taskQueue: string): Promise<void> {
  for await (const w of client.workflow.list({
    query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
  })) {
    await client.workflow
      .getHandle(w.workflowId, w.runId)
      .terminate('cli-versions test over')
      .catch(() => undefined);
  }
}

describe('against the dev server (SQLite visibility)', () => {
  let stack: TestStack;
  let receiver: Receiver;
  const unpolled = uniqueName('tq-unpolled');

  beforeAll(async () => {
    // Real time: an order stays pending (open) for its 30 minutes, longer than this file.
    stack = await startTestStack({ timeScale: 1 });
    receiver = await new Receiver().answer(200).start();
  });
  afterAll(async () => {
    if (stack) {
      await terminateOpenRuns(stack.client, stack.taskQueue);
      await terminateOpenRuns(stack.client, unpolled);
    }
    await receiver?.stop();
    await stack?.stop();
  });

  test('when orders are open, then none lacks the baseline and runs of other builds are counted as lacking it', async () => {
    const app = await stack.createApp(['payments']);
    const pay = paymentsClient(stack, app, receiver);
    const orders = 3;
    for (let i = 0; i < orders; i++) await pay.create();
    await visible(stack.client, stack.taskQueue, orders, orders);

    // The stack's own task queue: every order its worker ran recorded the baseline.
    expect(await baselineRow(globalState().temporalAddress, '--task-queue', stack.taskQueue)).toEqual({
      workflow_type: 'orderWorkflow',
      marker: BASELINE,
      open_runs_lacking: 0,
      open_runs: orders,
    });

    await startUnpolledRuns(stack.client, unpolled);
    await visible(stack.client, unpolled, 4, 2);
    expect(await baselineRow(globalState().temporalAddress, '--task-queue', unpolled)).toMatchObject({
      open_runs_lacking: 2,
      open_runs: 4,
    });

    // Every task queue: other test files share the namespace, so at least this file's runs.
    const all = await baselineRow(globalState().temporalAddress);
    expect(all.open_runs).toBeGreaterThanOrEqual(orders + 4);
    expect(all.open_runs_lacking).toBeGreaterThanOrEqual(2);
    expect(all.open_runs_lacking).toBeLessThanOrEqual(all.open_runs);

    const table = await durapay(globalState().temporalAddress, 'versions', '--task-queue', stack.taskQueue);
    expect(table.stdout).toMatch(/^workflow type +marker +open runs lacking it +open runs\n/);
    expect(table.stdout).toMatch(new RegExp(`^orderWorkflow +${BASELINE} +0 +${orders}$`, 'm'));
    expect(table.stderr).toContain('A marker with 0 open runs lacking it may be deprecated');
  });
});

describe('against the production server (PostgreSQL visibility)', () => {
  let workDir: string | undefined;
  const databasePrefix = `temporal_versions_${Date.now().toString(36)}`;
  let stopServer: (() => Promise<void>) | undefined;
  let connection: Connection | undefined;

  afterAll(async () => {
    await connection?.close();
    await stopServer?.();
    const pg = new PgClient({ connectionString: globalState().adminUrl });
    await pg.connect();
    try {
      for (const name of [databasePrefix, `${databasePrefix}_visibility`])
        await pg.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await pg.end();
    }
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  test('when a run has recorded no marker at all, then it is counted as lacking the baseline', async () => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-versions-'));
    const server = await startClusterServer({
      binaries: cachedServerBinaries(loadConfig().cacheDir),
      adminUrl: globalState().adminUrl,
      databasePrefix,
      workDir,
      namespace: 'default',
      shards: 1,
      progress: (line) => process.stderr.write(`[versions] ${line}\n`),
    });
    stopServer = () => server.stop();
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default' });
    const taskQueue = uniqueName('tq-unpolled');
    await startUnpolledRuns(client, taskQueue);
    await visible(client, taskQueue, 4, 2);

    // The server is this test's alone: every task queue is these four runs.
    expect(await baselineRow(server.address)).toEqual({
      workflow_type: 'orderWorkflow',
      marker: BASELINE,
      open_runs_lacking: 2,
      open_runs: 4,
    });
  });
});

test('when Temporal does not answer, then the command says so on one line and exits 1', async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const failed = await durapay(address, 'versions').then(
    () => undefined,
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stdout).toBe('');
  expect(failed?.stderr).toMatch(new RegExp(`^durapay: Temporal at ${address} did not answer .*\\n$`));
});
