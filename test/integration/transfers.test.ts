/**
 * Transfers over HTTP on the sandbox channel (SPEC §11): every status a transfer reaches, each
 * announced once; a repeat of merchant_transfer_no is the same transfer, a different request
 * with it is refused; a create whose answer was lost is found by query, never sent again; many
 * identical requests at once make one transfer, counted at the channel.
 */
import { randomUUID } from 'node:crypto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { transferWorkflowId } from '../../src/modules/transfers/messages';
import { TransferService } from '../../src/modules/transfers/service';
import {
  resealTransferPayees,
  TransferRepository,
  transferPayeesSealedWith,
} from '../../src/modules/transfers/repository';
import { newPayloadKeyEntry, parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { globalState } from '../support/state';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type Answer, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(300_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 100 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Transfer {
  transfer_no: string;
  merchant_transfer_no: string;
  status: string;
  amount: number;
  payee: { type: string; account: string };
  pay_credential: { package_info: string } | null;
  channel_transfer_no: string | null;
  fail_reason: string | null;
  finished_at: string | null;
}

const body = (overrides: Record<string, unknown> = {}) => ({
  merchant_transfer_no: `W-${randomUUID()}`,
  channel_code: 'sandbox',
  amount: 100,
  payee: { type: 'alipay_user_id', account: '2088000000000001' },
  remark: 'Cashback',
  notify_url: receiver.url,
  ...overrides,
});

const transfer = (overrides: Record<string, unknown> = {}) =>
  pay.post<Transfer>('/api/v1/transfer', body(overrides));
const query = (transferNo: string) => pay.get<Transfer>(`/api/v1/transfer/query/${transferNo}`);
const cancel = (transferNo: string) =>
  pay.post<Transfer>('/api/v1/transfer/cancel', { transfer_no: transferNo });

/** Waits for the transfer's workflow to end: then its notification has had its first attempt. */
async function ended(transferNo: string): Promise<Transfer> {
  await stack.client.workflow.getHandle(transferWorkflowId(transferNo)).result();
  return (await query(transferNo)).data!;
}

/** The notifications of one type the receiver got about a transfer. */
const told = (transferNo: string, type?: string) =>
  receiver.received
    .map((r) => JSON.parse(r.body) as { type: string; data: { transfer_no?: string } })
    .filter((b) => b.data.transfer_no === transferNo && (type === undefined || b.type === type));

/** Create requests the sandbox channel received for this transfer (1 when durapay asked once). */
const channelCreates = (transferNo: string) => stack.sandboxControls.transferCreates(transferNo);

function ok(a: Answer<Transfer>): Transfer {
  if (a.code !== 'success') throw new Error(`transfer failed: ${a.status} ${a.code} ${a.message}`);
  return a.data!;
}

describe('a transfer that is paid', () => {
  test('when a transfer is made, then it is processing, succeeds, is announced once and was asked once', async () => {
    const made = ok(await transfer({ amount: 1234 }));
    expect(made).toMatchObject({ status: 'processing', amount: 1234, pay_credential: null });
    expect(made.transfer_no).toMatch(/^T\d{24}$/);
    // The payee is shown masked, never as sent.
    expect(made.payee).toEqual({ type: 'alipay_user_id', account: '208****0001' });
    const done = await ended(made.transfer_no);
    expect(done).toMatchObject({ status: 'success', fail_reason: null });
    expect(done.finished_at).toEqual(expect.any(String));
    expect(done.channel_transfer_no).toEqual(expect.any(String));
    expect(told(made.transfer_no).map((n) => n.type)).toEqual(['transfer.succeeded']);
    expect(await channelCreates(made.transfer_no)).toBe(1);
  });

  test('when the payee must confirm, then it waits with a package_info until confirmed on the page, then succeeds', async () => {
    const made = ok(await transfer({ payee: { type: 'openid', account: 'o-user-0001' } }));
    expect(made.status).toBe('wait_user_confirm');
    expect(made.pay_credential).toEqual({ package_info: expect.any(String) });
    expect((await query(made.transfer_no)).data?.status).toBe('wait_user_confirm');
    const page = await fetch(`${stack.baseUrl}/sandbox/transfers/${made.transfer_no}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'confirm' }),
    });
    expect(page.status).toBe(200);
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success', pay_credential: null });
    expect(told(made.transfer_no).map((n) => n.type)).toEqual(['transfer.succeeded']);
  });

  test('when the payee lets it expire, then it is closed as failed (OVERDUE_CLOSE) and announced so', async () => {
    const made = ok(await transfer({ payee: { type: 'openid', account: 'o-user-0002' } }));
    await fetch(`${stack.baseUrl}/sandbox/transfers/${made.transfer_no}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'expire' }),
    });
    const done = await ended(made.transfer_no);
    expect(done).toMatchObject({ status: 'failed' });
    expect(done.fail_reason).toContain('OVERDUE_CLOSE');
    expect(told(made.transfer_no).map((n) => n.type)).toEqual(['transfer.failed']);
  });

  test('when a slow transfer takes its time, then it is processing until the channel says success', async () => {
    const made = ok(await transfer({ remark: 'Slow [transfer:slow]' }));
    expect(made.status).toBe('processing');
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success' });
    expect(told(made.transfer_no).map((n) => n.type)).toEqual(['transfer.succeeded']);
  });

  test('when a merchant pays out, then its account at the channel is used', async () => {
    const merchantId = await pay.merchant();
    const made = ok(await transfer({ merchant_id: merchantId }));
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success' });
    expect(await stack.sandboxControls.transferAccount(made.transfer_no)).toBe(`S-${merchantId}`);
  });
});

describe('a transfer that does not pay', () => {
  test('when the channel fails it, then it is failed with the reason and announced once', async () => {
    const made = ok(await transfer({ remark: 'Fail [transfer:fail]' }));
    const done = await ended(made.transfer_no);
    expect(done).toMatchObject({ status: 'failed', fail_reason: expect.any(String) });
    expect(told(made.transfer_no).map((n) => n.type)).toEqual(['transfer.failed']);
  });

  test('when the channel refuses it, then 502 channel_transfer_fail, the same again on a repeat, and recorded failed', async () => {
    const b = body({ remark: 'Refuse [transfer:refuse]' });
    const first = await pay.post<Transfer>('/api/v1/transfer', b);
    expect(first).toMatchObject({ status: 502, code: 'channel_transfer_fail', data: null });
    const transferNo = /transfer (T\d+)/.exec(first.message)?.[1];
    expect(transferNo).toBeDefined();
    const again = await pay.post<Transfer>('/api/v1/transfer', b);
    expect(again).toMatchObject({ status: 502, code: 'channel_transfer_fail', message: first.message });
    expect(await ended(transferNo!)).toMatchObject({ status: 'failed', channel_transfer_no: null });
    expect(await channelCreates(transferNo!)).toBe(1);
    expect(told(transferNo!).map((n) => n.type)).toEqual(['transfer.failed']);
  });

  test('when the answer to the create is lost, then the transfer is found by query and never asked again', async () => {
    const made = ok(await transfer({ remark: 'Lost [transfer:lost]' }));
    expect(made.status).toBe('processing');
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success' });
    expect(await channelCreates(made.transfer_no)).toBe(1);
    expect(told(made.transfer_no).map((n) => n.type)).toEqual(['transfer.succeeded']);
  });
});

describe('cancelling', () => {
  test('when a transfer waiting for its payee is cancelled, then it is cancelled, announced once, and a second cancel answers the same', async () => {
    const made = ok(await transfer({ payee: { type: 'openid', account: 'o-user-0003' } }));
    expect(made.status).toBe('wait_user_confirm');
    const cancelled = ok(await cancel(made.transfer_no));
    expect(['cancelled', 'processing']).toContain(cancelled.status);
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'cancelled' });
    expect(ok(await cancel(made.transfer_no)).status).toBe('cancelled');
    expect(told(made.transfer_no).map((n) => n.type)).toEqual(['transfer.cancelled']);
  });

  test('when a transfer has succeeded, then cancelling it is 400 invalid_param naming its status', async () => {
    const made = ok(await transfer());
    await ended(made.transfer_no);
    const refused = await cancel(made.transfer_no);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(refused.message).toContain('success');
  });

  test('when the transfer is unknown or another app’s, then 422 transfer_not_found for query and cancel', async () => {
    const made = ok(await transfer());
    const other = paymentsClient(stack, await stack.createApp(['payments']), receiver);
    expect(await other.get(`/api/v1/transfer/query/${made.transfer_no}`)).toMatchObject({
      status: 422,
      code: 'transfer_not_found',
    });
    expect(await other.post('/api/v1/transfer/cancel', { transfer_no: made.transfer_no })).toMatchObject({
      status: 422,
      code: 'transfer_not_found',
    });
    expect(await query('T00000000000000000000000000')).toMatchObject({
      status: 422,
      code: 'transfer_not_found',
    });
    expect(await pay.get('/api/v1/transfer/query/')).toMatchObject({ status: 400, code: 'missing_param' });
    await ended(made.transfer_no);
  });
});

describe('the same transfer, once', () => {
  test('when the same request is sent again, then it answers the same transfer; a different one with its number is 400', async () => {
    const b = body();
    const first = ok(await pay.post<Transfer>('/api/v1/transfer', b));
    const again = ok(await pay.post<Transfer>('/api/v1/transfer', b));
    expect(again.transfer_no).toBe(first.transfer_no);
    for (const changed of [
      { amount: 101 },
      { payee: { ...b.payee, account: '2088000000000002' } },
      { payee: { ...b.payee, name: 'Zhang San' } },
      { remark: 'Other' },
      { notify_url: `${receiver.url}/other` },
    ]) {
      const refused = await pay.post('/api/v1/transfer', { ...b, ...changed });
      expect(refused).toMatchObject({
        status: 400,
        code: 'invalid_param',
        message: 'merchant_transfer_no already used with a different request',
      });
    }
    // Another app's number is its own.
    const other = paymentsClient(stack, await stack.createApp(['payments']), receiver);
    const theirs = await other.post<Transfer>('/api/v1/transfer', b);
    expect(theirs.data?.transfer_no).not.toBe(first.transfer_no);
    await ended(first.transfer_no);
    await ended(theirs.data!.transfer_no);
    expect(await channelCreates(first.transfer_no)).toBe(1);
  });

  test('when 20 identical requests arrive at once, then they answer one transfer and the channel is asked once (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const b = body({ remark: round % 2 ? 'Lost [transfer:lost]' : 'Cashback' });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => pay.post<Transfer>('/api/v1/transfer', b)),
      );
      const numbers = new Set(answers.map((a) => ok(a).transfer_no));
      expect(numbers.size).toBe(1);
      const [transferNo] = [...numbers];
      expect(await ended(transferNo!)).toMatchObject({ status: 'success' });
      expect(await channelCreates(transferNo!)).toBe(1);
      expect(told(transferNo!)).toHaveLength(1);
    }
  });
});

describe('refused before anything is recorded', () => {
  test.each([
    [{ merchant_transfer_no: undefined }, 'merchant_transfer_no'],
    [{ merchant_transfer_no: 'has space' }, 'merchant_transfer_no'],
    [{ amount: 0 }, 'amount'],
    [{ amount: '100' }, 'amount'],
    [{ payee: { type: 'bank_card', account: '6222' } }, 'payee.type'],
    [{ payee: { type: 'openid' } }, 'payee.account'],
    [{ remark: '' }, 'remark'],
    [{ notify_url: 'not a url' }, 'notify_url'],
    [{ channel_code: undefined }, 'channel_code'],
    [{ surprise: true }, 'surprise'],
  ])('when %j, then 400 invalid_param naming %s', async (overrides, field) => {
    const a = await pay.post('/api/v1/transfer', body(overrides));
    expect(a).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(a.message).toContain(field);
  });

  test('when the channel is unknown, then 502 channel_not_support', async () => {
    expect(await transfer({ channel_code: 'paypal' })).toMatchObject({
      status: 502,
      code: 'channel_not_support',
    });
  });

  test('when the merchant is unknown or has no account at the channel, then 400 and 502 channel_transfer_fail', async () => {
    const unknown = await transfer({ merchant_id: 'nobody' });
    expect(unknown).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(unknown.message).toContain('merchant_id');
    const merchantId = `m-${randomUUID().slice(0, 12)}`;
    await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'No Account' });
    const none = await transfer({ merchant_id: merchantId });
    expect(none).toMatchObject({ status: 502, code: 'channel_transfer_fail' });
    expect(none.message).toContain('sandbox');
  });

  test('when the cancel body is wrong, then 400 invalid_param naming transfer_no', async () => {
    const a = await pay.post('/api/v1/transfer/cancel', {});
    expect(a).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(a.message).toContain('transfer_no');
  });
});

test('when a transfer is waiting for its payee, then the query shows it until the payee acts', async () => {
  const made = ok(await transfer({ payee: { type: 'openid', account: 'o-user-0004' } }));
  const seen = await until('still waiting', async () => {
    const q = await query(made.transfer_no);
    return q.data?.status === 'wait_user_confirm' ? q.data : undefined;
  });
  expect(seen.pay_credential?.package_info).toBe(made.pay_credential?.package_info);
  await cancel(made.transfer_no);
  await ended(made.transfer_no);
});

test('when the payload keys rotate, then `keys reseal --rotate` seals payees again, the old key opens none, and a repeat still matches', async () => {
  const b = body({ payee: { type: 'alipay_logon_id', account: 'buyer@example.com', name: 'Zhang San' } });
  const made = ok(await pay.post<Transfer>('/api/v1/transfer', b));
  await ended(made.transfer_no);
  const db = stack.database.db;
  const entry = newPayloadKeyEntry('rotated');
  const old = parsePayloadKeys(globalState().payloadKeys, 'the tests');
  const rotated = parsePayloadKeys(`${entry},${globalState().payloadKeys}`, 'rotated');
  const stored = async () => (await new TransferRepository(db, old).findByNo(made.transfer_no))!;
  // Sealed at rest: neither the account nor the name is in the row.
  expect((await stored()).payee).not.toContain('buyer@example.com');
  expect((await stored()).payee).not.toContain('Zhang San');
  expect(await transferPayeesSealedWith(db, old.current.id)).toBeGreaterThan(0);

  expect((await resealTransferPayees(db, rotated)).resealed).toBeGreaterThan(0);
  expect(await transferPayeesSealedWith(db, old.current.id)).toBe(0);
  expect(new TransferRepository(db, rotated).payeeOf(await stored())).toEqual({
    account: 'buyer@example.com',
    name: 'Zhang San',
  });
  const resealed = await stored();
  expect(() => new TransferRepository(db, old).payeeOf(resealed)).toThrow('rotated');

  // A payee whose key is not listed is named and left as it is.
  const stranger = parsePayloadKeys(newPayloadKeyEntry('stranger'), 'stranger');
  const unlisted = await resealTransferPayees(db, stranger);
  expect(unlisted.resealed).toBe(0);
  expect(unlisted.unopened.map((u) => u.transferNo)).toContain(made.transfer_no);

  // Sealed back with the stack's key: the API opens it, and the repeat is the same transfer.
  const back = parsePayloadKeys(`${globalState().payloadKeys},${entry}`, 'back');
  expect((await resealTransferPayees(db, back)).resealed).toBeGreaterThan(0);
  expect(ok(await pay.post<Transfer>('/api/v1/transfer', b)).transfer_no).toBe(made.transfer_no);
});

test('when a transfer was recorded but its start never reached Temporal, then the sweep starts it once and it ends; the next sweep starts nothing', async () => {
  const service = new TransferService(stack.services);
  const transferNo = `T${Date.now()}${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`;
  // The API's insert, without the start that follows it.
  await service.repository.insert({
    transferNo,
    appId: app.app_id,
    merchantTransferNo: `W-${randomUUID()}`,
    channelCode: 'sandbox',
    merchantId: null,
    channelAccountId: null,
    subMerchantNo: null,
    amount: 100,
    currency: 'CNY',
    payeeType: 'alipay_user_id',
    payee: { account: '2088000000000001', name: null },
    payeeHint: '208****0001',
    remark: 'Stranded',
    scene: null,
    notifyUrl: receiver.url,
  });
  expect(await service.startNeverSent(60_000)).toBe(0);
  expect(await service.startNeverSent(0)).toBe(1);
  expect(await ended(transferNo)).toMatchObject({ status: 'success' });
  expect(await service.startNeverSent(0)).toBe(0);
  expect(await channelCreates(transferNo)).toBe(1);
  expect(told(transferNo).map((n) => n.type)).toEqual(['transfer.succeeded']);
});
