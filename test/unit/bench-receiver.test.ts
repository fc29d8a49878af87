import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WebhookReceiver } from '../../bench/lib/receiver';

const secret = `whsec_${randomBytes(32).toString('base64')}`;

async function deliver(url: string, body: object, key = secret): Promise<number> {
  const raw = JSON.stringify(body);
  const id = `ntf_${randomBytes(6).toString('hex')}`;
  const at = new Date();
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(key).sign(id, at, raw),
    },
    body: raw,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('bench webhook receiver', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await new WebhookReceiver(secret).start();
  });
  afterEach(() => receiver.stop());

  test('when a signed event arrives, then the waiter for that event and order resolves', async () => {
    const waiting = receiver.waitFor('payment.succeeded', 'P1', 5_000);
    expect(await deliver(receiver.url, { type: 'payment.succeeded', data: { trade_no: 'P1' } })).toBe(204);
    await expect(waiting).resolves.toEqual(expect.any(Number));
    expect(receiver.received).toBe(1);
  });

  test('when the event arrived before anyone waited, then a later wait returns it at once', async () => {
    await deliver(receiver.url, { type: 'payment.succeeded', data: { trade_no: 'P2' } });
    await expect(receiver.waitFor('payment.succeeded', 'P2', 5_000)).resolves.toEqual(expect.any(Number));
  });

  test("when the signature is not the app secret's, then it is refused and no waiter resolves", async () => {
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    const waiting = receiver.waitFor('payment.succeeded', 'P3', 300);
    expect(await deliver(receiver.url, { type: 'payment.succeeded', data: { trade_no: 'P3' } }, other)).toBe(
      400,
    );
    await expect(waiting).rejects.toThrow('payment.succeeded for P3 did not arrive within 300 ms');
    expect(receiver.rejected).toBe(1);
  });

  test('when another event type arrives for the order, then the waiter keeps waiting', async () => {
    const waiting = receiver.waitFor('payment.succeeded', 'P4', 300);
    await deliver(receiver.url, { type: 'payment.closed', data: { trade_no: 'P4' } });
    await expect(waiting).rejects.toThrow(/did not arrive/);
  });
});
