/**
 * Replay safety: histories recorded from real runs must replay against the current workflow
 * code without a determinism error. Committed fixtures catch changes that would break
 * workflows already running in production; fresh runs catch non-determinism in new code.
 * `RECORD_HISTORIES=1 npx jest test/integration/replay.test.ts` writes the fixtures of scenarios
 * that have none (`RECORD_HISTORIES_ALL=1` rewrites every one).
 */
import { contractWorkflowId } from '../../src/modules/contracts';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { createActivities } from '../../src/activities';
import { moveOnSignal, orderWorkflowId, patches } from '../../src/modules/orders/messages';
import { transferWorkflowId } from '../../src/modules/transfers/messages';
import { refundWorkflowId } from '../../src/modules/refunds/messages';
import { notificationWorkflowId } from '../../src/modules/notifications/messages';
import { applicationWorkflowId } from '../../src/modules/applications/messages';
import { diagnosticWorkflowId } from '../../src/diagnostics/messages';
import { callbackRetentionScheduleId } from '../../src/modules/callbacks/messages';
import { reconciliationWorkflowId } from '../../src/modules/reconciliation/messages';
import { billDateOf } from '../../src/modules/reconciliation/rules';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { signedFetch } from '../support/signing';
import { Receiver } from '../support/receiver';
import { globalState } from '../support/state';
import { payloadsAt, replayHistories, writtenByTemporal } from '../support/history';
import { until } from '../support/wait';
import { paymentsClient } from '../support/payments';
import { isEncryptedPayload } from '../../src/platform/payload-codec';
import { channelTokenWorkflowId } from '../../src/modules/merchants/messages';
import { complaintSweepScheduleId, complaintWorkflowId } from '../../src/modules/complaints/messages';

jest.setTimeout(120_000);

const run = promisify(execFile);
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'histories');
/** The fixtures' own payload key (a test key, committed): recorded histories are sealed with it. */
const FIXTURE_KEYS = fs.readFileSync(path.join(FIXTURES, 'payload-keys.txt'), 'utf8');

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    payloadKeys: FIXTURE_KEYS,
    notifications: { retryScheduleMs: [5_000, 5_000, 5_000], timeoutMs: 2_000 },
    timeScale: 0.01,
    sandboxRefundDelayMs: 100,
    // Complaints are WeChat Pay's (its offline upstream): the complaint scenarios need it.
    wechatpay: {},
  });
});
afterAll(async () => {
  await stack?.stop();
});

/** The patches a history's markers recorded, and how many upserts of TemporalChangeVersion it made. */
function patchesAsked(history: temporal.api.history.v1.IHistory) {
  const markers: string[] = [];
  let changeVersionUpserts = 0;
  for (const e of history.events ?? []) {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_patch') {
      const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
      markers.push((JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { id: string }).id);
    }
    const upserted = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    if (upserted?.TemporalChangeVersion) changeVersionUpserts += 1;
  }
  return { markers, changeVersionUpserts };
}

const replay = (histories: { workflowId: string; history: temporal.api.history.v1.IHistory }[]) =>
  replayHistories(histories, FIXTURE_KEYS);

/**
 * The fixtures: one history of each way each workflow type ends, recorded by the code of
 * release 1.0.0 (CHANGELOG). A run started by a release must replay on every later one; runs
 * started before 1.0 are not carried over. Histories of a later release that changes a
 * workflow's commands go beside these, in a folder named for the release before the change,
 * until no open run needs them (docs/operations.md, "Retiring a workflow version").
 */
const FIXTURE_SETS = ['.'];

test('when the committed histories are replayed against the current code, then none fails', async () => {
  const files = FIXTURE_SETS.flatMap((set) => {
    const inSet = fs.readdirSync(path.join(FIXTURES, set)).filter((f) => f.endsWith('.json'));
    expect(inSet.length).toBeGreaterThanOrEqual(9);
    return inSet.map((f) => path.join(set, f));
  });
  const histories = files.map((f) => ({
    workflowId: f.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(FIXTURES, f), 'utf8'))),
  }));
  const results = await replay(histories);
  expect(results).toHaveLength(files.length);
  expect(results.filter((r) => r.error)).toEqual([]);
});

test('when the committed histories are listed, then every workflow type a worker serves has one', () => {
  const recorded = new Set(
    fs
      .readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.json'))
      .map((f) => {
        const events = (
          JSON.parse(fs.readFileSync(path.join(FIXTURES, f), 'utf8')) as {
            events: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[];
          }
        ).events;
        return events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
      }),
  );
  // Every workflow type the production bundle exports (src/workflows/index.ts), and the diagnostic one.
  const index = fs.readFileSync(path.join(__dirname, '..', '..', 'src', 'workflows', 'index.ts'), 'utf8');
  const served = [
    ...[...index.matchAll(/^export \{([^}]+)\}/gm)].flatMap((m) => m[1]!.split(',').map((n) => n.trim())),
    'diagnosticWorkflow',
  ];
  expect(served.length).toBeGreaterThanOrEqual(10);
  expect(served.filter((type) => !recorded.has(type))).toEqual([]);
});

test('when the histories recorded now are read without the key, then every payload durapay wrote is sealed', () => {
  const files = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
  expect(files.length).toBeGreaterThanOrEqual(9);
  for (const file of files) {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')));
    const plain = payloadsAt(history)
      .filter(({ at, payload }) => !isEncryptedPayload(payload) && !writtenByTemporal(history, at))
      .map(
        ({ at, payload }) =>
          `${at}: ${Buffer.from(payload.data ?? [])
            .toString('utf8')
            .slice(0, 60)}`,
      );
    expect([file, plain]).toEqual([file, []]);
  }
});

test('when scenarios run now, then their histories replay without a determinism error', async () => {
  const app = await stack.createApp(['payments', 'merchants']);
  const receiver = await new Receiver().start();
  const publish = createActivities(stack.activityDeps).publishNotification;
  try {
    const scenarios: Record<string, string> = {};
    /** Scenarios whose history is an earlier run of their workflow, not its latest. */
    const runIds: Record<string, string> = {};

    const runId = randomUUID();
    await stack.client.workflow.execute('diagnosticWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: diagnosticWorkflowId(runId),
      args: [{ runId, pauseMs: 20 }],
    });
    scenarios['diagnostic'] = diagnosticWorkflowId(runId);

    const event = (key: string) => ({
      appId: app.app_id,
      type: 'payment.succeeded' as const,
      eventKey: `${key}:${randomUUID()}`,
      url: receiver.url,
      data: { trade_no: 'P1' },
      occurredAt: new Date().toISOString(),
      tradeNo: 'P1',
    });
    // Most receivers answer the first attempt, which the publisher makes itself: such a
    // notification has no workflow now. notification-delivered-at-first-attempt.json stays, a
    // history of a run its publisher started before, which must still replay.
    receiver.answer(500, 500, 200);
    const retried = await publish(event('retried'));
    await stack.client.workflow.getHandle(notificationWorkflowId(retried)).result();
    scenarios['notification-delivered-after-retries'] = notificationWorkflowId(retried);

    receiver.answer(503);
    const failed = await publish(event('failed'));
    const failedRun = stack.client.workflow.getHandle(notificationWorkflowId(failed));
    await failedRun.result();
    scenarios['notification-failed'] = notificationWorkflowId(failed);
    runIds['notification-failed'] = (await failedRun.describe()).runId;

    // The app asks for the failed one again: a new run, whose first attempt is its own.
    receiver.answer(200);
    const resentByApp = await envelope(
      await signedFetch(stack.baseUrl, app, 'POST', `/api/v1/notifications/${failed}/resend`, { json: {} }),
    );
    expect(resentByApp.code).toBe('success');
    const resentRun = stack.client.workflow.getHandle(notificationWorkflowId(failed));
    await until('the resend delivered', async () =>
      (await resentRun.describe()).runId !== runIds['notification-failed'] ? true : undefined,
    );
    await resentRun.result();
    scenarios['notification-resent-by-app'] = notificationWorkflowId(failed);

    // A resend reaching the workflow while it waits between attempts starts a new series.
    receiver.answer(500, 200);
    const resent = await publish({ ...event('resent') });
    const handle = stack.client.workflow.getHandle(notificationWorkflowId(resent));
    while (receiver.received.filter((r) => r.headers['webhook-id'] === resent).length < 1) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await handle.signal('resendNotification');
    await handle.result();
    scenarios['notification-resent-while-waiting'] = notificationWorkflowId(resent);

    // Orders: paid by callback then partly refunded; closed at expiry; refused by the channel.
    const post = (path: string, json: unknown) => signedFetch(stack.baseUrl, app, 'POST', path, { json });
    const createOrder = async (extra: Record<string, unknown>) => {
      const merchantOrderNo = `M-${randomUUID()}`;
      const body = await envelope<{ trade_no: string; pay_credential: { pay_url: string } }>(
        await post('/api/v1/pay/unified-order', {
          merchant_order_no: merchantOrderNo,
          pay_method: 'qr_code',
          amount: 100,
          subject: 'Replay',
          notify_url: receiver.url,
          ...extra,
        }),
      );
      return { merchantOrderNo, ...body };
    };
    /** The buyer pays on the sandbox's checkout page, which takes it. */
    const checkout = paymentsClient(stack, app, receiver);
    const buyerPays = async (payUrl: string) => expect((await checkout.buyerPays(payUrl)).status).toBe(200);
    const orderStatus = async (tradeNo: string) =>
      (await envelope(await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/pay/query/${tradeNo}`))).data
        ?.status;
    const waitFor = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 20_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    receiver.answer(200);
    const paid = await createOrder({});
    await buyerPays(paid.data!.pay_credential.pay_url);
    await waitFor('paid', async () => (await orderStatus(paid.data!.trade_no)) === 'paid');
    const refund = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', { trade_no: paid.data!.trade_no, refund_amount: 40 }),
    );
    await waitFor(
      'partially refunded',
      async () => (await orderStatus(paid.data!.trade_no)) === 'partially_refunded',
    );
    await stack.client.workflow.getHandle(refundWorkflowId(refund.data!.refund_no)).result();
    scenarios['order-paid-partly-refunded'] = orderWorkflowId(app.app_id, paid.merchantOrderNo);
    scenarios['refund-succeeded'] = refundWorkflowId(refund.data!.refund_no);

    // Paid with its callback lost: the poll finds the payment.
    const polled = await createOrder({ extra: { sandbox: { callback: 'drop' } } });
    await buyerPays(polled.data!.pay_credential.pay_url);
    await waitFor('paid by polling', async () => (await orderStatus(polled.data!.trade_no)) === 'paid');
    scenarios['order-paid-by-polling'] = orderWorkflowId(app.app_id, polled.merchantOrderNo);

    // Shared, then refunded in full: the part beyond the unshared remainder comes back first.
    const sharer = `m-${randomUUID().slice(0, 8)}`;
    const madeSharer = await envelope(
      await post('/api/v1/merchant', {
        merchant_id: sharer,
        merchant_name: 'Replay Shares',
        profit_sharing: {
          receivers: [{ type: 'MERCHANT_ID', account: '1900000101', name: 'Partner', weight: 1 }],
          max_ratio: 1,
        },
      }),
    );
    expect(madeSharer.code).toBe('success');
    const attached = await envelope(
      await signedFetch(stack.baseUrl, app, 'PUT', `/api/v1/merchant/${sharer}/channel-accounts/sandbox`, {
        json: { sub_merchant_no: `S-${sharer}` },
      }),
    );
    expect(attached.code).toBe('success');
    const shared = await createOrder({ merchant_id: sharer, profit_sharing_amount: 60 });
    await buyerPays(shared.data!.pay_credential.pay_url);
    const orderData = async (tradeNo: string) =>
      (await envelope(await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/pay/query/${tradeNo}`))).data;
    await waitFor(
      'shared',
      async () => (await orderData(shared.data!.trade_no))?.profit_sharing_status === 'finished',
    );
    const sharedRefund = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', { trade_no: shared.data!.trade_no, refund_amount: 100 }),
    );
    expect(sharedRefund.code).toBe('success');
    await stack.client.workflow.getHandle(orderWorkflowId(app.app_id, shared.merchantOrderNo)).result();
    expect(await orderData(shared.data!.trade_no)).toMatchObject({
      status: 'refunded',
      profit_sharing_status: 'returned',
    });
    scenarios['order-shared-then-refunded'] = orderWorkflowId(app.app_id, shared.merchantOrderNo);

    // Paid, its run ended idle with its state saved; a refund reopens it in a new run (SPEC §7).
    const idle = await createOrder({});
    await buyerPays(idle.data!.pay_credential.pay_url);
    const idleId = orderWorkflowId(app.app_id, idle.merchantOrderNo);
    const idleRun = stack.client.workflow.getHandle(idleId);
    expect(await idleRun.result()).toBe('idle');
    runIds['order-ended-idle'] = (await idleRun.describe()).runId;
    scenarios['order-ended-idle'] = idleId;
    const reopening = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', { trade_no: idle.data!.trade_no, refund_amount: 40 }),
    );
    expect(reopening.code).toBe('success');
    await stack.client.workflow.getHandle(refundWorkflowId(reopening.data!.refund_no)).result();
    await waitFor(
      'reopened and partially refunded',
      async () => (await orderStatus(idle.data!.trade_no)) === 'partially_refunded',
    );
    expect(await stack.client.workflow.getHandle(idleId).result()).toBe('idle');
    scenarios['order-reopened-for-refund'] = idleId;

    // An operator moves a paid order's run on (moveOnSignal): it continues as new, carrying its
    // state, and the next run decides refunds as the first would have.
    const movedOn = await createOrder({});
    await buyerPays(movedOn.data!.pay_credential.pay_url);
    await waitFor('paid', async () => (await orderStatus(movedOn.data!.trade_no)) === 'paid');
    const movedId = orderWorkflowId(app.app_id, movedOn.merchantOrderNo);
    const firstRunId = (await stack.client.workflow.getHandle(movedId).describe()).runId;
    await stack.client.workflow.getHandle(movedId).signal(moveOnSignal);
    await waitFor(
      'moved on',
      async () =>
        (await stack.client.workflow.getHandle(movedId, firstRunId).describe()).status.name ===
        'CONTINUED_AS_NEW',
    );
    const afterMove = await envelope(
      await post('/api/v1/pay/refund', { trade_no: movedOn.data!.trade_no, refund_amount: 40 }),
    );
    expect(afterMove.code).toBe('success');
    await waitFor(
      'partially refunded after the move',
      async () => (await orderStatus(movedOn.data!.trade_no)) === 'partially_refunded',
    );
    expect(
      await stack.database.db.sequelize.query(
        'SELECT count(*)::int AS n FROM sandbox_refunds WHERE trade_no = :t',
        {
          replacements: { t: movedOn.data!.trade_no },
          plain: true,
        },
      ),
    ).toEqual({ n: 1 });
    scenarios['order-moved-on'] = movedId;
    runIds['order-moved-on'] = firstRunId;

    // A refund the channel ends abnormal, paid out to the merchant's bank card.
    const abnormal = await createOrder({});
    await buyerPays(abnormal.data!.pay_credential.pay_url);
    await waitFor('paid', async () => (await orderStatus(abnormal.data!.trade_no)) === 'paid');
    const stuck = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', {
        trade_no: abnormal.data!.trade_no,
        refund_amount: 30,
        reason: 'card closed [sandbox:abnormal]',
      }),
    );
    const refundStatus = async (refundNo: string) =>
      (await envelope(await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/pay/refund/query/${refundNo}`)))
        .data?.status;
    await waitFor('abnormal', async () => (await refundStatus(stuck.data!.refund_no)) === 'abnormal');
    const applied = await envelope(
      await post('/api/v1/pay/refund/abnormal', {
        refund_no: stuck.data!.refund_no,
        method: 'merchant_bank_card',
      }),
    );
    expect([applied.code, applied.message]).toEqual(['success', 'success']);
    await waitFor('paid out', async () => (await refundStatus(stuck.data!.refund_no)) === 'success');
    await stack.client.workflow.getHandle(refundWorkflowId(stuck.data!.refund_no)).result();
    scenarios['refund-abnormal-paid-to-card'] = refundWorkflowId(stuck.data!.refund_no);

    const expired = await createOrder({ expire_minutes: 1 });
    expect(expired.code).toBe('success');
    await waitFor('closed', async () => (await orderStatus(expired.data!.trade_no)) === 'closed');
    scenarios['order-closed-at-expiry'] = orderWorkflowId(app.app_id, expired.merchantOrderNo);

    const refused = await createOrder({ extra: { sandbox: { fail_create: true } } });
    expect(refused.code).toBe('channel_create_fail');
    await stack.client.workflow.getHandle(orderWorkflowId(app.app_id, refused.merchantOrderNo)).result();
    scenarios['order-create-refused'] = orderWorkflowId(app.app_id, refused.merchantOrderNo);

    // Closed by its merchant before the buyer paid (its run then waits out the late payment window).
    const closedByMerchant = await createOrder({});
    expect(
      (await envelope(await post('/api/v1/pay/close', { trade_no: closedByMerchant.data!.trade_no }))).code,
    ).toBe('success');
    expect(await orderStatus(closedByMerchant.data!.trade_no)).toBe('closed');
    scenarios['order-closed-by-merchant'] = orderWorkflowId(app.app_id, closedByMerchant.merchantOrderNo);

    // An onboarding application audited to the end.
    const merchantId = `m-${randomUUID().slice(0, 8)}`;
    const madeMerchant = await envelope(
      await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/merchant', {
        json: { merchant_id: merchantId, merchant_name: 'Replay Tea' },
      }),
    );
    expect(madeMerchant.code).toBe('success');
    const application = await envelope<{ application_id: string }>(
      await post(`/api/v1/merchant/${merchantId}/apply`, {
        channel_code: 'sandbox',
        notify_url: receiver.url,
      }),
    );
    await stack.client.workflow.getHandle(applicationWorkflowId(application.data!.application_id)).result();
    scenarios['merchant-application-approved'] = applicationWorkflowId(application.data!.application_id);

    // An application the channel rejects, with its reason.
    const rejectedMerchant = `m-${randomUUID().slice(0, 8)}`;
    expect(
      (
        await envelope(
          await post('/api/v1/merchant', { merchant_id: rejectedMerchant, merchant_name: 'Replay Rue' }),
        )
      ).code,
    ).toBe('success');
    const rejection = await envelope<{ application_id: string }>(
      await post(`/api/v1/merchant/${rejectedMerchant}/apply`, {
        channel_code: 'sandbox',
        notify_url: receiver.url,
        submit_data: { sandbox_outcome: 'reject' },
      }),
    );
    expect(rejection.code).toBe('success');
    const rejectionId = applicationWorkflowId(rejection.data!.application_id);
    await stack.client.workflow.getHandle(rejectionId).result();
    scenarios['merchant-application-rejected'] = rejectionId;

    // A reconciliation run of an account whose statement was not ready at first. (An account of
    // its own: a run's workflow id names no deployment, and test files share a namespace.)
    const billDate = billDateOf(new Date());
    const account = `S-replay-${randomUUID().slice(0, 8)}`;
    const ownAccount = await envelope(
      await signedFetch(
        stack.baseUrl,
        app,
        'PUT',
        `/api/v1/merchant/${merchantId}/channel-accounts/sandbox`,
        {
          json: { sub_merchant_no: account },
        },
      ),
    );
    expect(ownAccount.code).toBe('success');
    // On the account's day: a payment the statement shows one fen more (amount_mismatch), and an
    // order closed by its merchant that the buyer paid at the channel all the same (its close
    // lost there): the run finds it and repairs it through the order, which takes the payment.
    const mismatched = await createOrder({ merchant_id: merchantId, subject: 'Tea [statement:amount+1]' });
    await buyerPays(mismatched.data!.pay_credential.pay_url);
    await waitFor('paid', async () => (await orderStatus(mismatched.data!.trade_no)) === 'paid');
    const late = await createOrder({ merchant_id: merchantId, extra: { sandbox: { callback: 'drop' } } });
    expect((await envelope(await post('/api/v1/pay/close', { trade_no: late.data!.trade_no }))).code).toBe(
      'success',
    );
    await stack.database.db.sequelize.query(
      "UPDATE sandbox_orders SET status = 'paid', paid_at = now(), closed_at = NULL WHERE trade_no = :t",
      { replacements: { t: late.data!.trade_no } },
    );
    stack.sandboxControls.holdStatement(billDate, 1);
    const reconciled = await envelope<{ list: { run_id: string }[] }>(
      await post('/api/v1/reconciliation/runs', { channel_code: 'sandbox', bill_date: billDate, account }),
    );
    expect(reconciled.code).toBe('success');
    const reconciliationId = reconciliationWorkflowId(reconciled.data!.list[0]!.run_id);
    const reconciledRun = await stack.client.workflow.getHandle(reconciliationId).result();
    expect(reconciledRun).toMatchObject({ status: 'completed' });
    expect(reconciledRun.summary?.categories).toMatchObject({ amount_mismatch: 1, missing_local_payment: 1 });
    expect(reconciledRun.summary?.repaired).toBe(1);
    await waitFor('paid after close', async () => (await orderStatus(late.data!.trade_no)) === 'paid');
    scenarios['reconciliation-held-found-repaired'] = reconciliationId;
    scenarios['order-paid-after-close'] = orderWorkflowId(app.app_id, late.merchantOrderNo);

    // The daily schedule's workflow, for a day with nothing to reconcile.
    const dayId = `replay-reconciliation-day-${randomUUID()}`;
    expect(
      await stack.client.workflow.execute('reconciliationDayWorkflow', {
        taskQueue: stack.taskQueue,
        workflowId: dayId,
        args: [{ billDate: '2001-01-01' }],
      }),
    ).toEqual([]);
    scenarios['reconciliation-day-empty'] = dayId;

    // An account token's follower, for an account that is no longer attached: it ends at once.
    const tokenId = channelTokenWorkflowId({ appId: app.app_id, merchantId, id: 0 });
    expect(
      await stack.client.workflow.execute('channelTokenWorkflow', {
        taskQueue: stack.taskQueue,
        workflowId: tokenId,
        args: [
          {
            accountId: 0,
            appId: app.app_id,
            merchantId,
            channelCode: 'sandbox',
            notifyUrl: null,
            announce: false,
          },
        ],
      }),
    ).toBe('detached');
    scenarios['channel-token-detached'] = tokenId;

    // Transfers: one waiting for its payee, who confirms it; one whose create was never answered,
    // found by query; one cancelled while it waited.
    const transfer = async (payee: Record<string, string>, remark: string) => {
      const made = await envelope<{ transfer_no: string }>(
        await post('/api/v1/transfer', {
          merchant_transfer_no: `W-${randomUUID()}`,
          channel_code: 'sandbox',
          amount: 100,
          payee,
          remark,
          notify_url: receiver.url,
        }),
      );
      expect(made.code).toBe('success');
      return made.data!.transfer_no;
    };
    const confirmed = await transfer({ type: 'openid', account: 'o-replay' }, 'Replay');
    await stack.sandboxControls.confirmTransfer(confirmed);
    await stack.client.workflow.getHandle(transferWorkflowId(confirmed)).result();
    scenarios['transfer-confirmed'] = transferWorkflowId(confirmed);
    const lost = await transfer(
      { type: 'alipay_user_id', account: '2088000000000001' },
      'Replay [transfer:lost]',
    );
    await stack.client.workflow.getHandle(transferWorkflowId(lost)).result();
    scenarios['transfer-lost-then-found'] = transferWorkflowId(lost);
    const cancelled = await transfer({ type: 'openid', account: 'o-replay' }, 'Replay');
    expect((await envelope(await post('/api/v1/transfer/cancel', { transfer_no: cancelled }))).code).toBe(
      'success',
    );
    await stack.client.workflow.getHandle(transferWorkflowId(cancelled)).result();
    scenarios['transfer-cancelled'] = transferWorkflowId(cancelled);
    const expiredTransfer = await transfer({ type: 'openid', account: 'o-replay' }, 'Replay');
    await fetch(`${stack.baseUrl}/sandbox/transfers/${expiredTransfer}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'expire' }),
    });
    await stack.client.workflow.getHandle(transferWorkflowId(expiredTransfer)).result();
    scenarios['transfer-expired'] = transferWorkflowId(expiredTransfer);

    // A retention run, as its schedule starts it, over callbacks of which one is past the retention.
    await fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, { method: 'POST', body: '{}' });
    await stack.database.db.sequelize.query(
      "UPDATE channel_callbacks SET received_at = now() - interval '91 days' WHERE raw_body = '{}'",
    );
    const retentionId = `${callbackRetentionScheduleId(stack.taskQueue)}-${randomUUID()}`;
    await stack.client.workflow.execute('callbackRetentionWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: retentionId,
      args: [{ retentionDays: 90, batchSize: 1_000 }],
    });
    scenarios['callback-retention'] = retentionId;

    // A complaint by notification, replied to and completed; and a sweep of the safety net.
    await checkout.post('/api/v1/merchant', {
      merchant_id: 'replay-complaints',
      merchant_name: 'Replay Tea',
    });
    await checkout.attach('replay-complaints', 'wechatpay', { sub_mchid: '1900000109' });
    const sweepId = `${complaintSweepScheduleId(stack.taskQueue)}-${randomUUID()}`;
    await stack.client.workflow.execute('complaintSweepWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: sweepId,
      args: [{ days: 7, publicBaseUrl: stack.baseUrl }],
    });
    scenarios['complaint-sweep'] = sweepId;
    const wxOrder = await checkout.post<{ trade_no: string; pay_credential: Record<string, string> }>(
      '/api/v1/pay/unified-order',
      checkout.orderBody({
        channel_code: 'wechatpay',
        merchant_id: 'replay-complaints',
        expire_minutes: 1440,
      }),
    );
    // WeChat Pay's offline checkout page takes the buyer's `pay`.
    await fetch(wxOrder.data!.pay_credential.code_url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'pay' }),
    });
    await checkout.statusIs(wxOrder.data!.trade_no, 'paid');
    const complaint = stack.wechatpay!.sandbox.openComplaint(wxOrder.data!.trade_no);
    const complaintPath = `/api/v1/complaints/${complaint.complaintId}`;
    await until('the complaint kept', async () =>
      (await checkout.get(complaintPath)).status === 200 ? true : undefined,
    );
    expect((await checkout.post(`${complaintPath}/reply`, { content: '已处理' })).status).toBe(200);
    expect((await checkout.post(`${complaintPath}/complete`, {})).status).toBe(200);
    scenarios['complaint-replied-completed'] = complaintWorkflowId('wechatpay', complaint.complaintId);
    // A refund request refunded in part through the order's book, approved at the channel, completed.
    const refunded = stack.wechatpay!.sandbox.openComplaint(wxOrder.data!.trade_no);
    const refundedPath = `/api/v1/complaints/${refunded.complaintId}`;
    await until('the second complaint kept', async () =>
      (await checkout.get(refundedPath)).status === 200 ? true : undefined,
    );
    expect((await checkout.post(`${refundedPath}/refund`, { refund_amount: 1 })).status).toBe(200);
    expect(refunded.calls.refundProgress).toBe(1);
    expect((await checkout.post(`${refundedPath}/complete`, {})).status).toBe(200);
    scenarios['complaint-refunded-approved'] = complaintWorkflowId('wechatpay', refunded.complaintId);

    // Contracts: one signed, waiting for its first deduction, and cancelled; one cancelled unsigned.
    const offerContract = async () => {
      const made = await checkout.post<{ contract_no: string; sign_url: string; status: string }>(
        '/api/v1/contracts',
        {
          merchant_contract_no: `REPLAY-${randomUUID()}`,
          channel_code: 'sandbox',
          plan: { period: 'month', every: 1, amount: 100, count: 3 },
          subject: 'Replay tea',
          notify_url: receiver.url,
        },
      );
      expect(made.code).toBe('success');
      const view = await checkout.get<{ merchant_contract_no: string }>(
        `/api/v1/contracts/${made.data!.contract_no}`,
      );
      return { ...made.data!, workflowId: contractWorkflowId(app.app_id, view.data!.merchant_contract_no) };
    };
    const signedContract = await offerContract();
    await fetch(signedContract.sign_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'sign' }),
    });
    await until('the contract signed', async () =>
      (await checkout.get<{ status: string }>(`/api/v1/contracts/${signedContract.contract_no}`)).data
        ?.status === 'active'
        ? true
        : undefined,
    );
    expect((await checkout.post(`/api/v1/contracts/${signedContract.contract_no}/cancel`, {})).status).toBe(
      200,
    );
    await stack.client.workflow.getHandle(signedContract.workflowId).result();
    scenarios['contract-signed-cancelled'] = signedContract.workflowId;
    const unsignedContract = await offerContract();
    expect((await checkout.post(`/api/v1/contracts/${unsignedContract.contract_no}/cancel`, {})).status).toBe(
      200,
    );
    await stack.client.workflow.getHandle(unsignedContract.workflowId).result();
    scenarios['contract-cancelled-unsigned'] = unsignedContract.workflowId;

    const histories = await Promise.all(
      Object.entries(scenarios).map(async ([name, workflowId]) => ({
        name,
        workflowId,
        runId: runIds[name],
        history: await stack.client.workflow.getHandle(workflowId, runIds[name]).fetchHistory(),
      })),
    );
    const results = await replay(histories);
    expect(results).toHaveLength(histories.length);
    expect(results.filter((r) => r.error)).toEqual([]);

    // An order started now asks one patch, the baseline that stands for all before it: one
    // marker and one TemporalChangeVersion upsert, not one of each per patch.
    const orderRuns = histories.filter((h) => h.workflowId.startsWith('order:'));
    expect(orderRuns.length).toBeGreaterThanOrEqual(5);
    for (const h of orderRuns) {
      expect([h.name, patchesAsked(h.history)]).toEqual([
        h.name,
        { markers: [patches.orderBaseline], changeVersionUpserts: 1 },
      ]);
    }

    if (process.env.RECORD_HISTORIES === '1') {
      // The Temporal CLI's JSON export is the canonical history format (what the UI downloads).
      const { cliPath, temporalAddress } = globalState();
      for (const h of histories) {
        // Committed histories stand for runs already out there: only a scenario without one is
        // written, unless RECORD_HISTORIES_ALL=1 asks for every one again.
        if (fs.existsSync(path.join(FIXTURES, `${h.name}.json`)) && process.env.RECORD_HISTORIES_ALL !== '1')
          continue;
        const { stdout } = await run(cliPath, [
          'workflow',
          'show',
          '--workflow-id',
          h.workflowId,
          ...(h.runId ? ['--run-id', h.runId] : []),
          '--address',
          temporalAddress,
          '--output',
          'json',
        ]);
        historyFromJSON(JSON.parse(stdout));
        fs.writeFileSync(
          path.join(FIXTURES, `${h.name}.json`),
          stdout.endsWith('\n') ? stdout : `${stdout}\n`,
        );
      }
    }
  } finally {
    await receiver.stop();
  }
});
