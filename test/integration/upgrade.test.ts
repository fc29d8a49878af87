/**
 * Orders whose workflow runs began under the last release go on under this code: the last
 * release's workflow code is bundled from the repository's history (its tag's commit), run by a
 * worker of its own on a task queue of its own, and stopped once an order's run is at rest; a
 * worker of this code takes the same task queue over. The runs replay as recorded, and the
 * order never pays out more than the buyer paid. A release that changes a workflow's commands
 * keeps this passing with `patched()` (docs/operations.md, "Retiring a workflow version").
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, NativeConnection, type Worker } from '@temporalio/worker';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { QueryTypes } from 'sequelize';
import { createWorker } from '../../src/worker';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { replayHistories } from '../support/history';
import { serveApi, startTestStack, uniqueName, type ExtraApi, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { globalState } from '../support/state';
import { until } from '../support/wait';

jest.setTimeout(300_000);

/**
 * The last release (CHANGELOG): its tag, and the commit it names. The commit is what is bundled:
 * a clone made without tags still has it, as an ancestor of this one.
 */
const LAST_RELEASE = { tag: 'v1.0.0', commit: '5956e659d07fd4890301454780bc87b81bc0b1e0' };
const ROOT = path.join(__dirname, '..', '..');

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let earlierCode: string;

/** The workflow bundle of a commit of this repository, built from its sources (cached per run). */
async function bundleOfCommit(commit: string): Promise<string> {
  // Inside the checkout, so that its imports resolve against this node_modules.
  const dir = path.join(ROOT, 'test-artifacts', 'releases', commit);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const archive = execFileSync('git', ['-C', ROOT, 'archive', '--format=tar', commit, 'src'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(dir, 'src', 'workflows', 'index.ts'),
    failureConverterPath: path.join(dir, 'src', 'platform', 'failure-converter.ts'),
  });
  return code;
}

// At 1/100 of real time: the share is due 10 s after payment, refunds settle within a second.
beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 100, profitShareDelayMs: 1_000_000 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  earlierCode = await bundleOfCommit(LAST_RELEASE.commit);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
  fs.rmSync(path.join(ROOT, 'test-artifacts', 'releases'), { recursive: true, force: true });
});

/** A worker of the given workflow code on its own task queue, with this code's activities. */
async function workerOf(taskQueue: string, code: string): Promise<{ stop(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: globalState().temporalAddress });
  const worker: Worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue,
    activities: { ...stack.activityDeps, taskQueue },
    workflowBundleCode: code,
    // Another worker takes the runs over: none stays sticky to this one.
    maxCachedWorkflows: 0,
    options: { shutdownGraceTime: '1 second' },
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** The orders of one test: an API and a worker of the earlier release on a task queue of their own. */
async function upgradeScene(): Promise<{
  api: ExtraApi;
  pay: PaymentsClient;
  /** The earlier release's worker stops once the order's run is at rest, and this code's takes over. */
  upgrade(tradeNo: string): Promise<void>;
  stop(): Promise<void>;
}> {
  const taskQueue = uniqueName('tq-upgrade');
  const api = await serveApi(stack, { taskQueue });
  let worker = await workerOf(taskQueue, earlierCode);
  const pay = paymentsClient({ ...stack, baseUrl: api.baseUrl }, app, receiver);
  return {
    api,
    pay,
    async upgrade(tradeNo: string) {
      await atRest(tradeNo);
      await worker.stop();
      worker = await workerOf(taskQueue, fs.readFileSync(globalState().bundlePath, 'utf8'));
    },
    async stop() {
      await worker.stop();
      await api.close();
    },
  };
}

/** The order's workflow, by its trade number. */
async function orderHandle(tradeNo: string) {
  const [row] = await stack.database.db.sequelize.query<{ merchant_order_no: string }>(
    'SELECT merchant_order_no FROM orders WHERE trade_no = :t',
    { replacements: { t: tradeNo }, type: QueryTypes.SELECT },
  );
  const workflowId = orderWorkflowId(app.app_id, row!.merchant_order_no);
  return { workflowId, handle: stack.client.workflow.getHandle(workflowId) };
}

/**
 * Until the earlier release has finished what it began for the order: no workflow task and no
 * activity under way. The read model says "shared" as soon as the share is recorded, while the
 * run's task that follows may still be running; a worker stopped in the middle of a task leaves
 * it to time out (30 s, ORDER_WORKFLOW_TASK_TIMEOUT) before another worker can take the run,
 * which is a worker dying, not the upgrade this file is about.
 */
async function atRest(tradeNo: string): Promise<void> {
  const { handle } = await orderHandle(tradeNo);
  await until(
    'the earlier release at rest',
    async () => {
      const { raw } = await handle.describe();
      return !raw.pendingWorkflowTask && (raw.pendingActivities ?? []).length === 0 ? true : undefined;
    },
    30_000,
  );
}

async function sharingMerchant(pay: PaymentsClient): Promise<string> {
  const merchantId = `m-${randomUUID().slice(0, 12)}`;
  const made = await pay.post('/api/v1/merchant', {
    merchant_id: merchantId,
    merchant_name: 'Shared Tea',
    profit_sharing: {
      receivers: [{ type: 'MERCHANT_ID', account: '1900000101', name: 'Tea Partner', weight: 1 }],
      max_ratio: 1,
    },
  });
  expect(made.code).toBe('success');
  await pay.attach(merchantId, 'sandbox', { sub_merchant_no: `S-${merchantId}` });
  return merchantId;
}

/** What the channel paid out for an order: refunds (not failed), shares, returns, unfreezes. */
async function atChannel(pay: PaymentsClient, tradeNo: string) {
  const n = (sql: string) => pay.count(sql, { t: tradeNo });
  const refunded = await n(
    "SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_refunds WHERE trade_no = :t AND status <> 'failed'",
  );
  const shared = await n(
    'SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_profit_shares WHERE trade_no = :t',
  );
  const returned = await n(
    'SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_share_returns WHERE trade_no = :t',
  );
  const unfrozen = await n('SELECT count(*) AS n FROM sandbox_unfreezes WHERE trade_no = :t');
  return { refunded, shared, returned, out: refunded + shared - returned, unfrozen };
}

/** Once no refund is processing, the order counts every refund made, and its share is settled. */
const finalRefund = (pay: PaymentsClient, tradeNo: string) =>
  until(
    'refunded and settled',
    async () => {
      const q = await pay.query(tradeNo);
      const open = await pay.count(
        "SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND status = 'processing'",
        { t: tradeNo },
      );
      const made = await pay.count(
        "SELECT COALESCE(SUM(refund_amount), 0) AS n FROM refunds WHERE trade_no = :t AND status IN ('success', 'abnormal')",
        { t: tradeNo },
      );
      const shareOpen = ['pending', 'processing'].includes(String(q.profit_sharing_status));
      return open === 0 && !shareOpen && Number(q.refunded_amount) === made ? q : undefined;
    },
    60_000,
  );

/**
 * A refund of the whole order, sent again unchanged while its answer is `502 channel_timeout`
 * (as SPEC tells a client): the worker that took over replays the whole run first.
 */
async function refundInFull(pay: PaymentsClient, tradeNo: string) {
  const body = { trade_no: tradeNo, refund_amount: 100, merchant_refund_no: `MR-${randomUUID()}` };
  for (let attempt = 1; ; attempt++) {
    const a = await pay.post('/api/v1/pay/refund', body);
    if (a.code !== 'channel_timeout' || attempt === 3) return a;
  }
}

test('when the last release is looked up in this clone, then its commit is here, and its tag, where the clone has tags, names that commit', () => {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', ROOT, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  expect(git('rev-parse', '--verify', `${LAST_RELEASE.commit}^{commit}`)).toBe(LAST_RELEASE.commit);
  const tags = git('tag', '--list', LAST_RELEASE.tag);
  // A clone made without tags has the commit alone, as an ancestor of this one.
  if (tags !== '') expect(git('rev-parse', `${LAST_RELEASE.tag}^{commit}`)).toBe(LAST_RELEASE.commit);
  expect(git('merge-base', '--is-ancestor', LAST_RELEASE.commit, 'HEAD')).toBe('');
});

test('when an order shared under the earlier release is refunded in full under this one, then the share comes back first and the channel pays out what the buyer paid', async () => {
  const scene = await upgradeScene();
  try {
    const { pay } = scene;
    const order = await pay.paidOrder({ merchant_id: await sharingMerchant(pay), profit_sharing_amount: 60 });
    await until(
      'shared',
      async () => ((await pay.query(order.trade_no)).profit_sharing_status === 'finished' ? true : undefined),
      60_000,
    );
    await scene.upgrade(order.trade_no);

    const refund = await refundInFull(pay, order.trade_no);
    expect({ status: refund.status, code: refund.code }).toEqual({ status: 200, code: 'success' });
    expect(await finalRefund(pay, order.trade_no)).toMatchObject({
      status: 'refunded',
      refunded_amount: 100,
      profit_sharing_status: 'returned',
    });
    expect(await atChannel(pay, order.trade_no)).toMatchObject({
      refunded: 100,
      shared: 60,
      returned: 60,
      out: 100,
    });
    // The run, begun by the earlier release and carried on by this code, replays as it ran.
    const [row] = await stack.database.db.sequelize.query<{ merchant_order_no: string }>(
      'SELECT merchant_order_no FROM orders WHERE trade_no = :t',
      { replacements: { t: order.trade_no }, type: QueryTypes.SELECT },
    );
    const workflowId = orderWorkflowId(app.app_id, row!.merchant_order_no);
    const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
    expect(await replayHistories([{ workflowId, history }])).toEqual([{ workflowId, error: undefined }]);
  } finally {
    await scene.stop();
  }
});

test('when an order paid under the earlier release is refunded in full under this one before its share is due, then nothing is shared and the frozen amount is released', async () => {
  const scene = await upgradeScene();
  try {
    const { pay } = scene;
    const order = await pay.paidOrder({ merchant_id: await sharingMerchant(pay), profit_sharing_amount: 60 });
    await scene.upgrade(order.trade_no);

    const refund = await refundInFull(pay, order.trade_no);
    expect({ status: refund.status, code: refund.code }).toEqual({ status: 200, code: 'success' });
    expect(await finalRefund(pay, order.trade_no)).toMatchObject({
      status: 'refunded',
      refunded_amount: 100,
      profit_sharing_status: 'cancelled',
    });
    expect(await atChannel(pay, order.trade_no)).toMatchObject({
      refunded: 100,
      shared: 0,
      out: 100,
      unfrozen: 1,
    });
  } finally {
    await scene.stop();
  }
});
