/**
 * Recurring contracts under interleavings (SPEC §17): fast-check draws, for several contracts at
 * once, what their channel does with each deduction (pays, refuses, loses the answer, confirms
 * later), when each is cancelled and by whom (the app, or the buyer at the channel), and when the
 * worker process is killed and another started; the contracts run against the real stack with
 * their workflows on that worker. Once every contract's workflow has ended, the invariants are
 * checked at the channel: paid deductions ≤ periods; at most one a day; none taken outside the
 * 07:00–22:00 window; nothing asked after a contract was cancelled at the channel; and money the
 * channel took ⇔ a paid deduction order at durapay. A failing case is shrunk and printed.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { SANDBOX_CONTRACT_WINDOW } from '../../src/channels/sandbox/contracts';
import { contractWorkflowId } from '../../src/modules/contracts';
import { contractTimeOf, inWindow } from '../../src/modules/contracts/rules';
import type { DeductionSteer } from '../../sandbox/controls';
import { envelope } from '../support/http';
import { serveApi, startTestStack, uniqueName, type ExtraApi, type TestStack } from '../support/harness';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { sevenAmAfterANotice } from '../support/contracts';
import { spawnWorker, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(900_000);

/** Runs per `npm test`, each of CONTRACTS_PER_RUN contracts at once; CONTRACT_MODEL_RUNS raises it. */
const RUNS = Number(process.env.CONTRACT_MODEL_RUNS ?? 3);
const CONTRACTS_PER_RUN = 3;
const PERIODS = 2;

/** 1/10 000 of real time: a day in 8.6 s. */
const TIME_SCALE = 0.0001;
const DAY_REAL_MS = 86_400_000 * TIME_SCALE;

let stack: TestStack;
let app: AppCredentials;
let api: ExtraApi;
let taskQueue: string;
let worker: WorkerProcess | undefined;

const workerEnv = () => ({
  DATABASE_URL: stack.database.url,
  DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
  PUBLIC_BASE_URL: stack.baseUrl,
  SANDBOX_SECRET: stack.sandboxSecret,
  DURAPAY_TIME_SCALE: String(TIME_SCALE),
});

async function startWorker(): Promise<void> {
  worker = spawnWorker(taskQueue, workerEnv());
  await worker.ready;
}

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE, sandboxBuyerConfirmMs: 30 });
  app = await stack.createApp(['payments']);
  taskQueue = uniqueName('tq-contract-model');
  // An API whose contracts (and their deductions' orders) run on a worker process of their own.
  api = await serveApi(stack, { taskQueue, requestTimeoutMs: 30_000 });
  await startWorker();
});
afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await stack?.stop();
});

interface Scenario {
  contracts: {
    steers: DeductionSteer[];
    cancel: { by: 'merchant' | 'buyer'; atDays: number } | null;
  }[];
  /** When the worker is killed (SIGKILL) and another started, in days after the contracts are signed. */
  killsAtDays: number[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  contracts: fc.array(
    fc.record({
      steers: fc.array(
        fc.constantFrom<DeductionSteer>('pays', 'insufficient', 'answer_lost', 'confirms_later'),
        {
          maxLength: 4,
        },
      ),
      cancel: fc.option(
        fc.record({
          by: fc.constantFrom<'merchant' | 'buyer'>('merchant', 'buyer'),
          atDays: fc.double({ min: 0, max: 3, noNaN: true }),
        }),
        { nil: null },
      ),
    }),
    { minLength: CONTRACTS_PER_RUN, maxLength: CONTRACTS_PER_RUN },
  ),
  killsAtDays: fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { maxLength: 2 }),
});

const post = async <T>(path: string, json: unknown) =>
  envelope<T>(await signedFetch(api.baseUrl, app, 'POST', path, { json }));
const get = async <T>(path: string) => envelope<T>(await signedFetch(api.baseUrl, app, 'GET', path));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ContractView {
  contract_no: string;
  merchant_contract_no: string;
  status: string;
  deductions: { trade_no: string | null; status: string }[];
}

/**
 * In the contract's own histories (every run of it), nothing asked for a deduction once the
 * workflow had taken a cancel (the app's update) or the channel's word that the buyer unsigned,
 * and each deduction was decided inside the channel's window: at the start of the workflow task
 * that asked for it, the time the workflow's clock read (a loaded machine may start the activity
 * itself much later).
 */
function eventMs(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
}

async function noDeductionAfterStop(merchantContractNo: string): Promise<void> {
  const workflowId = contractWorkflowId(app.app_id, merchantContractNo);
  for await (const run of stack.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const history = await stack.client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    let stoppedAt: number | null = null;
    let taskStartedAt: number | null = null;
    for (const [i, e] of (history.events ?? []).entries()) {
      if (e.workflowTaskStartedEventAttributes) taskStartedAt = eventMs(e.eventTime);
      const accepted = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
      const signal = e.workflowExecutionSignaledEventAttributes?.signalName;
      if (stoppedAt === null && (accepted === 'cancelContract' || signal === 'contractTerminated'))
        stoppedAt = i;
      const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
      if (stoppedAt !== null && scheduled === 'makeDeduction')
        throw new Error(
          `${workflowId} asked for a deduction at event ${i}, after the stop at event ${stoppedAt}`,
        );
      if (scheduled === 'makeDeduction') {
        const decidedAt = contractTimeOf(stack.services.contractClock!, taskStartedAt!);
        if (!inWindow(SANDBOX_CONTRACT_WINDOW, decidedAt))
          throw new Error(`${workflowId} decided a deduction outside the window, at event ${i}`);
      }
    }
  }
}

async function run(s: Scenario): Promise<void> {
  const made = await Promise.all(
    s.contracts.map(async (c) => {
      const created = await post<{ contract_no: string; sign_url: string }>('/api/v1/contracts', {
        merchant_contract_no: `MODEL-${randomUUID()}`,
        channel_code: 'sandbox',
        plan: { period: 'day', every: 1, amount: 300, count: PERIODS, first_at: sevenAmAfterANotice(stack) },
        subject: 'Model tea',
        notify_url: 'http://127.0.0.1:9/hooks',
      });
      if (created.code !== 'success') throw new Error(`create: ${created.code} ${created.message}`);
      const { contract_no: contractNo, sign_url: signUrl } = created.data!;
      stack.sandboxControls.steerDeductions(contractNo, c.steers);
      await fetch(signUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"result":"sign"}',
      });
      return { ...c, contractNo, cancelledAt: null as number | null };
    }),
  );
  const events: Promise<void>[] = [];
  for (const c of made) {
    if (!c.cancel) continue;
    const { by, atDays } = c.cancel;
    events.push(
      sleep(atDays * DAY_REAL_MS).then(async () => {
        if (by === 'buyer') {
          await fetch(`${stack.baseUrl}/sandbox/contracts/${c.contractNo}/terminate`, { method: 'POST' });
        } else {
          // The app's cancel: retried until it answers, as a client whose call timed out would.
          await until(
            `the cancel of ${c.contractNo}`,
            async () => {
              const answer = await post<ContractView>(`/api/v1/contracts/${c.contractNo}/cancel`, {});
              return answer.code === 'success' || answer.code === 'contract_ended' ? true : undefined;
            },
            120_000,
          );
          c.cancelledAt = Date.now();
        }
      }),
    );
  }
  for (const at of [...s.killsAtDays].sort((a, b) => a - b)) {
    events.push(
      sleep(at * DAY_REAL_MS).then(async () => {
        const old = worker!;
        old.child.kill('SIGKILL');
        await new Promise((r) =>
          old.child.exitCode !== null || old.child.signalCode !== null ? r(null) : old.child.once('exit', r),
        );
        await startWorker();
      }),
    );
  }
  await Promise.all(events);
  // Every contract's workflow has ended: nothing can ask for a deduction any more.
  const views = await Promise.all(
    made.map(async (c) => {
      const view = (await get<ContractView>(`/api/v1/contracts/${c.contractNo}`)).data!;
      await stack.client.workflow
        .getHandle(contractWorkflowId(app.app_id, view.merchant_contract_no))
        .result();
      return until(
        `the deductions of ${c.contractNo} settled`,
        async () => {
          const now = (await get<ContractView>(`/api/v1/contracts/${c.contractNo}`)).data!;
          return now.deductions.every((d) => d.status !== 'pending') ? now : undefined;
        },
        60_000,
      );
    }),
  );
  await stack.sandboxIdle();

  for (const view of views) await noDeductionAfterStop(view.merchant_contract_no);
  for (const [i, view] of views.entries()) {
    // What durapay decided, when: each attempt's row is written as its deduction is asked for.
    const asked = await stack.database.db.sequelize.query<{ created_at: Date }>(
      'SELECT created_at FROM contract_deductions WHERE contract_no = :no',
      { replacements: { no: view.contract_no }, type: QueryTypes.SELECT },
    );
    for (const d of asked) {
      // None asked after the app's cancel was answered (the window is checked in the histories).
      const cancelledAt = made[i]!.cancelledAt;
      if (cancelledAt !== null) expect(d.created_at.getTime()).toBeLessThanOrEqual(cancelledAt);
    }
    expect(['ended', 'cancelled']).toContain(view.status);
    const [contract] = await stack.database.db.sequelize.query<{
      contract_id: string;
      terminated_at: Date | null;
    }>('SELECT contract_id, terminated_at FROM sandbox_contracts WHERE contract_no = :no', {
      replacements: { no: view.contract_no },
      type: QueryTypes.SELECT,
    });
    const taken = await stack.database.db.sequelize.query<{
      trade_no: string;
      status: string;
      contract_day: string;
      created_at: Date;
    }>('SELECT trade_no, status, contract_day, created_at FROM sandbox_orders WHERE contract_id = :id', {
      replacements: { id: contract!.contract_id },
      type: QueryTypes.SELECT,
    });
    const paid = taken.filter((o) => o.status === 'paid');
    // Deductions ≤ periods, at most one a day.
    expect(paid.length).toBeLessThanOrEqual(PERIODS);
    expect(new Set(paid.map((o) => o.contract_day)).size).toBe(paid.length);
    for (const o of taken) {
      // None outside the window, none after the contract ended at the channel.
      expect(
        inWindow(
          SANDBOX_CONTRACT_WINDOW,
          contractTimeOf(stack.services.contractClock!, o.created_at.getTime()),
        ),
      ).toBe(true);
      if (contract!.terminated_at)
        expect(o.created_at.getTime()).toBeLessThanOrEqual(contract!.terminated_at.getTime());
    }
    // Money the channel took ⇔ a paid deduction order at durapay.
    const paidHere = view.deductions.filter((d) => d.status === 'paid').map((d) => d.trade_no);
    expect([...paidHere].sort()).toEqual(paid.map((o) => o.trade_no).sort());
    for (const tradeNo of paidHere) {
      const order = (await get<{ status: string }>(`/api/v1/pay/query/${tradeNo}`)).data!;
      expect(order.status).toBe('paid');
    }
  }
}

test('when contracts meet refusals, lost answers, cancels by either side and worker kills in any order, then no deduction exceeds its periods, its day, its window or its contract, and money taken ⇔ order paid', async () => {
  await fc.assert(fc.asyncProperty(scenario, run), { numRuns: RUNS, endOnFailure: true });
});
