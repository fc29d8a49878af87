/**
 * Migration 0017 on a database of the release before channel accounts: each merchant's one
 * `sub_merchant_no` becomes its account at its `channel_code`, every order names the account it
 * was made with, and those orders still refund and close. The previous release's schema is made
 * by taking 0017 back (its `down`) on a stack whose merchants and orders were made as they were
 * then: the merchant's number in its own row, orders with theirs or (older still) none.
 */
import { QueryTypes } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { migrations } from '../../src/platform/db/migrations';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ sandboxRefundDelayMs: 100 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

function migrator() {
  const sequelize = stack.database.db.sequelize;
  return new Umzug({
    migrations,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({
      sequelize,
      tableName: 'schema_migrations',
      modelName: 'schema_migrations',
    }),
    logger: undefined,
  });
}

const sql = <T extends object>(text: string, replacements: Record<string, unknown> = {}) =>
  stack.database.db.sequelize.query<T>(text, { replacements, type: QueryTypes.SELECT });

test('when a database of the previous release migrates, then merchants keep their account, orders name it, and they still refund and close', async () => {
  const merchantId = await pay.merchant();
  const paid = await pay.paidOrder({ merchant_id: merchantId });
  const pending = await pay.create({ merchant_id: merchantId });
  const [account] = await sql<{ account_no: string }>(
    'SELECT account_no FROM merchant_channel_accounts WHERE merchant_id = :m',
    { m: merchantId },
  );

  // The previous release: no accounts table; the merchant's number in its row; the pending order
  // from before orders kept their number.
  await migrator().down({ to: '0017-channel-accounts' });
  await sql('UPDATE orders SET sub_merchant_no = NULL WHERE trade_no = :t', { t: pending.trade_no });
  expect(
    await sql('SELECT channel_code, sub_merchant_no FROM merchants WHERE merchant_id = :m', {
      m: merchantId,
    }),
  ).toEqual([{ channel_code: 'sandbox', sub_merchant_no: account!.account_no }]);

  // Up again: this migration first, then any that came after it.
  const since = migrations.slice(migrations.findIndex((m) => m.name === '0017-channel-accounts'));
  expect((await migrator().up()).map((m) => m.name)).toEqual(since.map((m) => m.name));

  const accounts = await sql<{ id: string; kind: string; account_no: string; source: string }>(
    'SELECT id, kind, account_no, source FROM merchant_channel_accounts WHERE merchant_id = :m',
    { m: merchantId },
  );
  expect(accounts).toEqual([
    { id: expect.any(String), kind: 'sub_merchant_no', account_no: account!.account_no, source: 'migrated' },
  ]);
  expect(
    await sql('SELECT channel_account_id FROM orders WHERE trade_no IN (:t) ORDER BY trade_no', {
      t: [paid.trade_no, pending.trade_no],
    }),
  ).toEqual([{ channel_account_id: accounts[0]!.id }, { channel_account_id: accounts[0]!.id }]);
  expect((await pay.get(`/api/v1/merchant/${merchantId}`)).data).toMatchObject({
    status: 'active',
    channel_accounts: [{ channel_code: 'sandbox', sub_merchant_no: account!.account_no, source: 'migrated' }],
  });

  expect(await pay.post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 100 })).toMatchObject(
    {
      code: 'success',
    },
  );
  await until('refunded', async () =>
    (await pay.query(paid.trade_no)).status === 'refunded' ? true : undefined,
  );
  expect(await pay.post('/api/v1/pay/close', { trade_no: pending.trade_no })).toMatchObject({
    code: 'success',
  });
  expect((await pay.query(pending.trade_no)).status).toBe('closed');
  // New orders take the migrated account.
  expect((await pay.create({ merchant_id: merchantId })).trade_no).toEqual(expect.any(String));
});
