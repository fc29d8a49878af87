/**
 * Every paged list, the console's and the API's, walked page by page over HTTP while new rows are
 * written between pages (test/support/pages.ts): the documented order, every row that was there
 * before the walk exactly once (the console's keyset pages), nothing skipped and a row repeated
 * only where a new one pushed it on (the API's offset pages), and nothing listed that the list
 * does not hold. The order each list promises is read from the database by the table's own
 * columns, so a list that sorts by anything else (a text id, where 10 sorts before 9) fails here.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { addDays, billDateOf } from '../../src/modules/reconciliation/rules';
import { operatorsOf, signIn, signInAs, type ConsoleClient } from '../support/console';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { expectEveryRowOnce, keysetPages, offsetPages } from '../support/pages';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(180_000);

type Row = Record<string, unknown>;
type OffsetPage = { list: Row[]; limit: number; offset: number };

let stack: TestStack;
let appA: AppCredentials;
let receiver: Receiver;
let failing: Receiver;
let payA: PaymentsClient;
let admin: ConsoleClient;

beforeAll(async () => {
  // Notifications give up after three attempts, a few milliseconds apart.
  stack = await startTestStack({
    timeScale: 0.01,
    sandboxRefundDelayMs: 50,
    notifications: { retryScheduleMs: [50, 50], timeoutMs: 2_000 },
  });
  appA = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  failing = await new Receiver().answer(500).start();
  payA = paymentsClient(stack, appA, receiver);
  admin = await signIn(stack, 'admin');
});
afterAll(async () => {
  await receiver?.stop();
  await failing?.stop();
  await stack?.stop();
});

/** The keys a query gives, in its order: the list's documented order, by the table's own columns. */
async function keysBy(sql: string, replacements: Row = {}): Promise<string[]> {
  const rows = await stack.database.db.sequelize.query<{ k: string }>(sql, {
    replacements,
    type: QueryTypes.SELECT,
  });
  return rows.map((r) => String(r.k));
}

const console_ = (path: string, key: string) =>
  keysetPages<Row>(
    (p) => admin.get<{ list: Row[]; next: string | null }>(p),
    path,
    (r) => String(r[key]),
  );
const api = (pay: PaymentsClient, path: string, key: string) =>
  offsetPages<Row>(
    (p) => pay.get<OffsetPage>(p),
    path,
    (r) => String(r[key]),
  );

/** `n` times, one after another (each row newer than the last). */
async function times<T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await make(i));
  return out;
}

describe('the audit log', () => {
  test('when 26 entries span ids 9→10 and 99→100 and sign-ins are written during the walk, then every page is newest first by id and each entry is listed once', async () => {
    const operators = operatorsOf(stack);
    const tester = { operatorId: null, username: 'list-pages' };
    const write = (i: number) =>
      operators.record(tester, {
        action: 'test.entry',
        targetType: 'test',
        targetId: `entry-${i}`,
        outcome: 'succeeded',
      });
    const maxId = async () => Number((await keysBy('SELECT max(id) AS k FROM console_audit_log'))[0] ?? 0);
    // Entries up to id 12, then the sequence moved on to 94 and entries up to 108: as many as a
    // log reaches in a day, with its ids crossing from one digit to two and from two to three.
    expect(await maxId()).toBeLessThan(9);
    for (let i = 0; (await maxId()) < 12; i++) await write(i);
    await stack.database.db.sequelize.query("SELECT setval('console_audit_log_id_seq', 93)");
    for (let i = 100; (await maxId()) < 108; i++) await write(i);

    // The operator who signs in during the walk (made and signed in now: two entries more).
    const signer = await signIn(stack, 'viewer');
    const expected = await keysBy('SELECT id AS k FROM console_audit_log ORDER BY id DESC');
    expect(expected.length).toBeGreaterThanOrEqual(25);
    for (const id of ['9', '10', '99', '100']) expect(expected).toContain(id);

    const walk = await expectEveryRowOnce(console_('/audit', 'id'), expected, {
      limit: 4,
      during: async () => {
        await signInAs(stack, signer.username, signer.password);
        return [String(await maxId())];
      },
    });
    // A sign-in after each page but the last; each is in the log, newer than every entry walked.
    expect(walk.written).toHaveLength(walk.pages.length - 1);
    expect(Math.min(...walk.written.map(Number))).toBeGreaterThan(Number(expected[0]));
  });
});

describe('the console’s lists', () => {
  test('when orders are walked by app while new orders are made, then newest first, each once', async () => {
    const order = async () => [(await payA.create()).trade_no];
    await times(7, order);
    const expected = await keysBy(
      'SELECT trade_no AS k FROM orders WHERE app_id = :app ORDER BY created_at DESC, trade_no DESC',
      { app: appA.app_id },
    );
    await expectEveryRowOnce(console_(`/orders?app_id=${appA.app_id}`, 'trade_no'), expected, {
      limit: 3,
      during: order,
    });
  });

  test('when an order’s refunds are walked while it is refunded again, then newest first, each once', async () => {
    const paid = await payA.paidOrder({ amount: 1_000 });
    const refund = async () => {
      const a = await payA.post<{ refund_no: string }>('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        merchant_refund_no: `R-${randomUUID()}`,
        refund_amount: 10,
        reason: 'part',
      });
      expect(a.code).toBe('success');
      return [a.data!.refund_no];
    };
    await times(7, refund);
    const expected = await keysBy(
      'SELECT refund_no AS k FROM refunds WHERE trade_no = :t ORDER BY created_at DESC, refund_no DESC',
      { t: paid.trade_no },
    );
    expect(expected).toHaveLength(7);
    await expectEveryRowOnce(console_(`/refunds?trade_no=${paid.trade_no}`, 'refund_no'), expected, {
      limit: 2,
      during: refund,
    });
  });

  test('when transfers are walked by app while new ones are asked for, then newest first, each once', async () => {
    const transfer = async () => {
      const a = await payA.post<{ transfer_no: string }>('/api/v1/transfer', {
        merchant_transfer_no: `W-${randomUUID()}`,
        channel_code: 'sandbox',
        amount: 100,
        payee: { type: 'alipay_user_id', account: '2088000000000001' },
        remark: 'Cashback',
        notify_url: receiver.url,
      });
      expect(a.code).toBe('success');
      return [a.data!.transfer_no];
    };
    await times(7, transfer);
    const expected = await keysBy(
      'SELECT transfer_no AS k FROM transfers WHERE app_id = :app ORDER BY created_at DESC, transfer_no DESC',
      { app: appA.app_id },
    );
    await expectEveryRowOnce(console_(`/transfers?app_id=${appA.app_id}`, 'transfer_no'), expected, {
      limit: 3,
      during: transfer,
    });
  });

  test('when merchants, apps and operators are walked while more are made, then each newest first, each once', async () => {
    const merchant = async () => [await payA.merchant()];
    await times(7, merchant);
    await expectEveryRowOnce(
      console_(`/merchants?app_id=${appA.app_id}`, 'merchant_id'),
      await keysBy(
        'SELECT merchant_id AS k FROM merchants WHERE app_id = :app ORDER BY created_at DESC, app_id DESC, merchant_id DESC',
        { app: appA.app_id },
      ),
      { limit: 3, during: merchant },
    );

    const app = async () => [(await stack.createApp(['payments'])).app_id];
    await times(7, app);
    await expectEveryRowOnce(
      console_('/apps', 'app_id'),
      await keysBy('SELECT app_id AS k FROM apps ORDER BY created_at DESC, app_id DESC'),
      { limit: 3, during: app },
    );

    const operators = operatorsOf(stack);
    const operator = async () => {
      const made = await operators.create(
        { operatorId: null, username: 'list-pages' },
        { username: uniqueName('listed').slice(0, 60), role: 'viewer' },
      );
      return [made.operator.operatorId];
    };
    await times(7, operator);
    await expectEveryRowOnce(
      console_('/operators', 'operator_id'),
      await keysBy(
        'SELECT operator_id AS k FROM console_operators ORDER BY created_at DESC, operator_id DESC',
      ),
      { limit: 3, during: operator },
    );
  });
});

describe('notifications', () => {
  let app: AppCredentials;
  let pay: PaymentsClient;
  const told = (status?: string) =>
    keysBy(
      `SELECT notification_id AS k FROM notifications WHERE app_id = :app ${status ? 'AND status = :status' : ''}`,
      { app: app.app_id, status },
    );
  /** Pays an order whose notification goes to `notifyUrl`, and waits for it to end in `status`. */
  const paidAndTold = async (notifyUrl: string, status: 'delivered' | 'failed') => {
    const before = new Set(await told(status));
    await pay.paidOrder({ notify_url: notifyUrl });
    return until(`the payment’s notification ${status}`, async () => {
      const fresh = (await told(status)).filter((k) => !before.has(k));
      return fresh.length > 0 ? fresh : undefined;
    });
  };
  const delivered = () => paidAndTold(receiver.url, 'delivered');

  beforeAll(async () => {
    app = await stack.createApp(['payments']);
    pay = paymentsClient(stack, app, receiver);
    // Four that failed at their receiver and five delivered, interleaved.
    for (let i = 0; i < 9; i++) await (i % 2 === 0 ? delivered() : paidAndTold(failing.url, 'failed'));
  });

  test('when the console walks an app’s notifications while more fail and more are delivered, then the failed ones first, each group newest first, each once', async () => {
    const expected = await keysBy(
      `SELECT notification_id AS k FROM notifications WHERE app_id = :app
        ORDER BY (status = 'failed') DESC, created_at DESC, notification_id DESC`,
      { app: app.app_id },
    );
    expect(await told('failed')).toHaveLength(4);
    // Pages of 2 end inside the failed group and cross into the rest; new failures and
    // deliveries are written as the walk goes.
    await expectEveryRowOnce(console_(`/notifications?app_id=${app.app_id}`, 'notification_id'), expected, {
      limit: 2,
      during: (n) => (n % 2 === 0 ? delivered() : paidAndTold(failing.url, 'failed')),
    });
  });

  test('when the app walks its notifications by offset while more are made, then newest first, none skipped, each new one pushing one row on', async () => {
    const walk = await expectEveryRowOnce(
      api(pay, '/api/v1/notifications', 'notification_id'),
      await keysBy(
        'SELECT notification_id AS k FROM notifications WHERE app_id = :app ORDER BY created_at DESC, notification_id DESC',
        { app: app.app_id },
      ),
      { limit: 4, during: delivered },
    );
    expect(walk.written.length).toBeGreaterThan(0);
    expect(walk.repeats).toBe(walk.written.length);
  });
});

describe('reconciliation', () => {
  let account: string;
  let findingsRun: string;
  let today: string;

  const run = async (billDate: string) => {
    const a = await payA.post<{ list: { run_id: string }[] }>('/api/v1/reconciliation/runs', {
      channel_code: 'sandbox',
      bill_date: billDate,
      account,
    });
    expect(a.code).toBe('success');
    const runId = a.data!.list[0]!.run_id;
    await stack.client.workflow.getHandle(`reconciliation:${runId}`).result();
    return runId;
  };

  beforeAll(async () => {
    today = billDateOf(new Date());
    const merchantId = await payA.merchant();
    account = `S-${merchantId}`;
    // Twelve payments the statement reports a fen higher: twelve findings of one run, their ids
    // crossing 9→10.
    await times(12, () =>
      payA.paidOrder({ merchant_id: merchantId, amount: 400, subject: 'Tea [statement:amount+1]' }),
    );
    findingsRun = await run(today);
    // Seven more runs of the account, on days 30 to 24 back.
    await times(7, (i) => run(addDays(today, -(30 - i))));
  });

  // Runs started during a walk: days between the findings run's and the others', so that on the
  // app's list (latest day first) each lands ahead of the rows not read yet, and sometimes before
  // the page boundary (a row read again) or after it (a row listed that the walk began without).
  let back = 1;
  const anotherDay = async () => [await run(addDays(today, -back++))];

  test('when the console walks the runs while more are started, then newest first, each once', async () => {
    await expectEveryRowOnce(
      console_('/reconciliation/runs?channel_code=sandbox', 'run_id'),
      await keysBy(
        "SELECT run_id AS k FROM reconciliation_runs WHERE channel_code = 'sandbox' ORDER BY created_at DESC, run_id DESC",
      ),
      { limit: 3, during: anotherDay },
    );
  });

  test('when the app walks its runs by offset while more are started, then latest day first, none skipped, and each new run either listed or pushing one row on', async () => {
    const walk = await expectEveryRowOnce(
      api(payA, '/api/v1/reconciliation/runs?channel_code=sandbox', 'run_id'),
      await keysBy(
        "SELECT run_id AS k FROM reconciliation_runs WHERE channel_code = 'sandbox' ORDER BY bill_date DESC, run_id",
      ),
      { limit: 3, during: anotherDay },
    );
    // Some landed ahead of the page read (a row read again), some behind it (listed once).
    expect(walk.written.length).toBeGreaterThan(0);
  });

  test('when a run’s findings are walked, by the console newest first and by the app by offset oldest first, then each once', async () => {
    const path = `/reconciliation/runs/${encodeURIComponent(findingsRun)}/mismatches`;
    const ids = (order: string) =>
      keysBy(`SELECT id AS k FROM reconciliation_mismatches WHERE run_id = :run ORDER BY ${order}`, {
        run: findingsRun,
      });
    const newest = await ids('created_at DESC, id DESC');
    expect(newest).toHaveLength(12);
    expect(newest).toEqual(expect.arrayContaining(['9', '10']));
    await expectEveryRowOnce(console_(path, 'mismatch_id'), newest, { limit: 4 });
    await expectEveryRowOnce(api(payA, `/api/v1${path}`, 'mismatch_id'), await ids('id'), { limit: 4 });
  });
});

describe('the app’s merchants', () => {
  test('when the app walks its merchants by offset while more are made, then newest first, none skipped, each new one pushing one row on', async () => {
    const app = await stack.createApp(['merchants']);
    const pay = paymentsClient(stack, app, receiver);
    const merchant = async () => {
      const merchantId = `m-${randomUUID().slice(0, 12)}`;
      const a = await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' });
      expect(a.code).toBe('success');
      return [merchantId];
    };
    await times(7, merchant);
    const walk = await expectEveryRowOnce(
      api(pay, '/api/v1/merchant', 'merchant_id'),
      await keysBy(
        'SELECT merchant_id AS k FROM merchants WHERE app_id = :app ORDER BY created_at DESC, merchant_id DESC',
        { app: app.app_id },
      ),
      { limit: 3, during: merchant },
    );
    expect(walk.repeats).toBe(walk.written.length);
  });
});
