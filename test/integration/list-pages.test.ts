/**
 * Every paged list, the console's and the API's, walked page by page over HTTP while new rows are
 * written between pages (test/support/pages.ts): the documented order, every row that was there
 * before the walk exactly once (the console's keyset pages), nothing skipped (the API's offset
 * pages). The order each list promises is read from the database by its own columns, so a list
 * that sorts by anything else (a text id, where 10 sorts before 9) fails here.
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

let stack: TestStack;
let appA: AppCredentials;
let receiver: Receiver;
let payA: PaymentsClient;
let admin: ConsoleClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 50 });
  appA = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  payA = paymentsClient(stack, appA, receiver);
  admin = await signIn(stack, 'admin');
});
afterAll(async () => {
  await receiver?.stop();
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
const api = (path: string, key: string) =>
  offsetPages<Row>(
    (p) => payA.get<{ list: Row[]; limit: number; offset: number }>(p),
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

    const expected = await keysBy('SELECT id AS k FROM console_audit_log ORDER BY id DESC');
    expect(expected.length).toBeGreaterThanOrEqual(25);
    for (const id of ['9', '10', '99', '100']) expect(expected).toContain(id);

    const signer = await signIn(stack, 'viewer');
    const walk = await expectEveryRowOnce(console_('/audit', 'id'), expected, {
      limit: 4,
      during: async () => {
        await signInAs(stack, signer.username, signer.password);
        return 1;
      },
    });
    expect(walk.written).toBeGreaterThanOrEqual(6);
    // The entries written during the walk are in the log, after (above) every one walked.
    const now = await keysBy('SELECT id AS k FROM console_audit_log ORDER BY id DESC');
    expect(now.length).toBeGreaterThanOrEqual(expected.length + walk.written);
  });
});

describe('the console’s lists', () => {
  test('when orders are walked by app while new orders are made, then newest first, each once', async () => {
    await times(7, () => payA.create());
    const expected = await keysBy(
      'SELECT trade_no AS k FROM orders WHERE app_id = :app ORDER BY created_at DESC, trade_no DESC',
      { app: appA.app_id },
    );
    await expectEveryRowOnce(console_(`/orders?app_id=${appA.app_id}`, 'trade_no'), expected, {
      limit: 3,
      during: async () => (await payA.create(), 1),
    });
  });

  test('when an order’s refunds are walked while it is refunded again, then newest first, each once', async () => {
    const paid = await payA.paidOrder({ amount: 1_000 });
    const refund = () =>
      payA.post('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        merchant_refund_no: `R-${randomUUID()}`,
        refund_amount: 10,
        reason: 'part',
      });
    await times(7, async () => expect((await refund()).code).toBe('success'));
    const expected = await keysBy(
      'SELECT refund_no AS k FROM refunds WHERE trade_no = :t ORDER BY created_at DESC, refund_no DESC',
      { t: paid.trade_no },
    );
    expect(expected).toHaveLength(7);
    await expectEveryRowOnce(console_(`/refunds?trade_no=${paid.trade_no}`, 'refund_no'), expected, {
      limit: 2,
      during: async () => (expect((await refund()).code).toBe('success'), 1),
    });
  });

  test('when transfers are walked by app while new ones are asked for, then newest first, each once', async () => {
    const transfer = async () => {
      const a = await payA.post('/api/v1/transfer', {
        merchant_transfer_no: `W-${randomUUID()}`,
        channel_code: 'sandbox',
        amount: 100,
        payee: { type: 'alipay_user_id', account: '2088000000000001' },
        remark: 'Cashback',
        notify_url: receiver.url,
      });
      expect(a.code).toBe('success');
      return 1;
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
    const merchant = async () => (await payA.merchant(), 1);
    await times(7, merchant);
    await expectEveryRowOnce(
      console_(`/merchants?app_id=${appA.app_id}`, 'merchant_id'),
      await keysBy(
        'SELECT merchant_id AS k FROM merchants WHERE app_id = :app ORDER BY created_at DESC, app_id DESC, merchant_id DESC',
        { app: appA.app_id },
      ),
      { limit: 3, during: merchant },
    );

    const app = async () => (await stack.createApp(['payments']), 1);
    await times(7, app);
    await expectEveryRowOnce(
      console_('/apps', 'app_id'),
      await keysBy('SELECT app_id AS k FROM apps ORDER BY created_at DESC, app_id DESC'),
      { limit: 3, during: app },
    );

    const operators = operatorsOf(stack);
    const operator = async () => {
      await operators.create(
        { operatorId: null, username: 'list-pages' },
        { username: uniqueName('listed').slice(0, 60), role: 'viewer' },
      );
      return 1;
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
  const told = (appId: string) =>
    keysBy('SELECT notification_id AS k FROM notifications WHERE app_id = :app', { app: appId });
  /** Pays an order and waits for its notification's row. */
  const paidAndTold = async () => {
    const before = (await told(app.app_id)).length;
    await pay.paidOrder();
    await until('the payment’s notification', async () =>
      (await told(app.app_id)).length > before ? true : undefined,
    );
    return 1;
  };

  beforeAll(async () => {
    app = await stack.createApp(['payments']);
    pay = paymentsClient(stack, app, receiver);
    await times(7, paidAndTold);
  });

  const newestFirst = () =>
    keysBy(
      'SELECT notification_id AS k FROM notifications WHERE app_id = :app ORDER BY created_at DESC, notification_id DESC',
      { app: app.app_id },
    );

  test('when the console walks an app’s notifications while more are made, then newest first, each once', async () => {
    // None failed (the receiver answers 200), so the failed-first group is empty.
    await expectEveryRowOnce(
      console_(`/notifications?app_id=${app.app_id}`, 'notification_id'),
      await newestFirst(),
      { limit: 3, during: paidAndTold },
    );
  });

  test('when the app walks its notifications by offset while more are made, then newest first and none skipped', async () => {
    const walk = await expectEveryRowOnce(
      offsetPages<Row>(
        (p) => pay.get<{ list: Row[]; limit: number; offset: number }>(p),
        '/api/v1/notifications',
        (r) => String(r.notification_id),
      ),
      await newestFirst(),
      { limit: 3, during: paidAndTold },
    );
    expect(walk.written).toBeGreaterThan(0);
  });
});

describe('reconciliation', () => {
  let account: string;
  let findingsRun: string;
  const today = billDateOf(new Date());

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
    const merchantId = await payA.merchant();
    account = `S-${merchantId}`;
    // Seven payments the statement reports a fen higher: seven findings of one run.
    await times(7, () =>
      payA.paidOrder({ merchant_id: merchantId, amount: 400, subject: 'Tea [statement:amount+1]' }),
    );
    findingsRun = await run(today);
    // Seven more runs of the account, one a day back.
    await times(7, (i) => run(addDays(today, -(i + 1))));
  });

  let back = 8;
  const anotherDay = async () => (await run(addDays(today, -back++)), 1);

  test('when the console walks the runs while more are started, then newest first, each once', async () => {
    await expectEveryRowOnce(
      console_('/reconciliation/runs?channel_code=sandbox', 'run_id'),
      await keysBy(
        "SELECT run_id AS k FROM reconciliation_runs WHERE channel_code = 'sandbox' ORDER BY created_at DESC, run_id DESC",
      ),
      { limit: 3, during: anotherDay },
    );
  });

  test('when the app walks its runs by offset while more are started, then latest day first and none skipped', async () => {
    await expectEveryRowOnce(
      api('/api/v1/reconciliation/runs?channel_code=sandbox', 'run_id'),
      await keysBy(
        "SELECT run_id AS k FROM reconciliation_runs WHERE channel_code = 'sandbox' ORDER BY bill_date DESC, run_id",
      ),
      { limit: 3, during: anotherDay },
    );
  });

  test('when a run’s findings are walked, by the console newest first and by the app by offset oldest first, then each once', async () => {
    const path = `/reconciliation/runs/${encodeURIComponent(findingsRun)}/mismatches`;
    const ids = (order: string) =>
      keysBy(`SELECT id AS k FROM reconciliation_mismatches WHERE run_id = :run ORDER BY ${order}`, {
        run: findingsRun,
      });
    const newest = await ids('created_at DESC, id DESC');
    expect(newest).toHaveLength(7);
    await expectEveryRowOnce(console_(path, 'mismatch_id'), newest, { limit: 2 });
    await expectEveryRowOnce(api(`/api/v1${path}`, 'mismatch_id'), await ids('id'), { limit: 2 });
  });
});

describe('the app’s merchants', () => {
  test('when the app walks its merchants by offset while more are made, then newest first and none skipped', async () => {
    const app = await stack.createApp(['merchants']);
    const pay = paymentsClient(stack, app, receiver);
    const merchant = async () => {
      const a = await pay.post('/api/v1/merchant', {
        merchant_id: `m-${randomUUID().slice(0, 12)}`,
        merchant_name: 'Tea House',
      });
      expect(a.code).toBe('success');
      return 1;
    };
    await times(7, merchant);
    const walk = await expectEveryRowOnce(
      offsetPages<Row>(
        (p) => pay.get<{ list: Row[]; limit: number; offset: number }>(p),
        '/api/v1/merchant',
        (r) => String(r.merchant_id),
      ),
      await keysBy(
        'SELECT merchant_id AS k FROM merchants WHERE app_id = :app ORDER BY created_at DESC, merchant_id DESC',
        { app: app.app_id },
      ),
      { limit: 3, during: merchant },
    );
    // Each merchant made during the walk pushed the rest one row on: the walk saw each again.
    expect(walk.keys.length - new Set(walk.keys).size).toBe(walk.written);
  });
});
