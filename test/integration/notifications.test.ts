import { createHmac } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WorkflowNotFoundError } from '@temporalio/client';
import { tsToMs } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createActivities } from '../../src/activities';
import type { NotificationRequest } from '../../src/modules/notifications/rules';
import { NotificationRepository } from '../../src/modules/notifications/repository';
import { notificationView, type NotificationView } from '../../src/modules/notifications/view';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { Receiver } from '../support/receiver';
import { paymentsClient } from '../support/payments';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { spawnWorker } from '../support/worker-process';

jest.setTimeout(120_000);

const { EventType } = temporal.api.enums.v1;

// Five attempts with short, distinct gaps so that the schedule shows in the recorded times.
const GAPS_MS = [150, 300, 450, 600];

let stack: TestStack;
let app: AppCredentials;
let repo: NotificationRepository;
const receivers: Receiver[] = [];

beforeAll(async () => {
  stack = await startTestStack({
    notifications: { retryScheduleMs: GAPS_MS, timeoutMs: 2_000 },
    timeScale: 1,
  });
  app = await stack.createApp(['payments']);
  repo = new NotificationRepository(stack.database.db);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
  await stack?.stop();
});

async function receiver(...statuses: number[]): Promise<Receiver> {
  const r = await new Receiver().answer(...statuses).start();
  receivers.push(r);
  return r;
}

function event(url: string, overrides: Partial<NotificationRequest> = {}): NotificationRequest {
  const tradeNo = `P${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  return {
    appId: app.app_id,
    type: 'payment.succeeded',
    eventKey: `payment.succeeded:${tradeNo}`,
    url,
    data: { trade_no: tradeNo, amount: 100, status: 'paid' },
    occurredAt: new Date().toISOString(),
    tradeNo,
    ...overrides,
  };
}

/** What every producer calls: the publishNotification activity (store once, start delivery). */
async function publish(req: NotificationRequest): Promise<string> {
  return createActivities(stack.activityDeps).publishNotification(req);
}

/**
 * The notification once its delivery is over: its workflow's outcome, or, for one its
 * publisher's first attempt settled (no workflow: SPEC §7), the row as that attempt left it.
 */
async function finished(notificationId: string): Promise<NotificationView> {
  let outcome: string;
  try {
    outcome = await stack.client.workflow.getHandle(`notification:${notificationId}`).result();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    outcome = notificationView((await repo.find(app.app_id, notificationId))!).status;
    expect(outcome).not.toBe('pending');
  }
  const row = await repo.find(app.app_id, notificationId);
  const view = notificationView(row!);
  expect(view.status).toBe(outcome);
  return view;
}

function verifier(creds: AppCredentials = app): Webhook {
  return new Webhook(creds.webhook_secret);
}

describe('delivery', () => {
  test('when the receiver answers 200, then one signed delivery that a Standard Webhooks verifier accepts', async () => {
    const r = await receiver(200);
    const req = event(r.url);
    const id = await publish(req);
    const view = await finished(id);
    expect(view).toMatchObject({ status: 'delivered', attempt_count: 1, series: 1, last_error: null });
    expect(view.attempts).toEqual([
      expect.objectContaining({ series: 1, attempt: 1, http_status: 200, error: null }),
    ]);
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(id);
    const payload = verifier().verify(got.body, got.headers) as Record<string, unknown>;
    expect(payload).toEqual({
      type: 'payment.succeeded',
      timestamp: req.occurredAt,
      data: { ...req.data, app_id: app.app_id },
    });
  });

  test('when the signature is computed by hand as the Standard Webhooks specification says, then it is the one sent', async () => {
    // Not through the library durapay signs with: HMAC-SHA256 over "{id}.{timestamp}.{body}",
    // keyed with the base64-decoded part of the secret after "whsec_", base64, prefixed "v1,".
    const r = await receiver(200);
    const view = await finished(await publish(event(r.url)));
    const got = r.received[0]!;
    const key = Buffer.from(app.webhook_secret.slice('whsec_'.length), 'base64');
    expect(key).toHaveLength(32);
    const id = got.headers['webhook-id']!;
    const timestamp = got.headers['webhook-timestamp']!;
    // In seconds: the time the attempt was made, as it was recorded.
    expect(Number(timestamp)).toBe(Math.floor(Date.parse(view.attempts[0]!.attempted_at) / 1000));
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${got.body}`).digest('base64');
    expect(got.headers['webhook-signature']!.split(' ')).toContain(`v1,${expected}`);
  });

  test('when one byte of a delivered body is changed, then the verifier rejects it', async () => {
    const r = await receiver(200);
    await finished(await publish(event(r.url)));
    const got = r.received[0]!;
    const tampered = got.body.replace('"amount":100', '"amount":900');
    expect(tampered).not.toBe(got.body);
    expect(() => verifier().verify(tampered, got.headers)).toThrow();
    const other = await stack.createApp(['payments']);
    expect(() => verifier(other).verify(got.body, got.headers)).toThrow();
  });

  test('when the receiver answers 500 three times and then 200, then exactly four attempts and delivered', async () => {
    const r = await receiver(500, 500, 500, 200);
    const id = await publish(event(r.url));
    const view = await finished(id);
    expect(view.status).toBe('delivered');
    expect(view.attempts.map((a) => [a.attempt, a.http_status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 200],
    ]);
    expect(view.attempts.slice(0, 3).every((a) => a.error === 'HTTP 500')).toBe(true);
    expect(r.received).toHaveLength(4);
    // Same webhook-id on every retry; each attempt signed afresh and valid.
    expect(new Set(r.received.map((x) => x.headers['webhook-id']))).toEqual(new Set([id]));
    for (const x of r.received) expect(() => verifier().verify(x.body, x.headers)).not.toThrow();
  });

  test('when the receiver never answers 2xx, then failed after the configured attempts, spaced by the schedule', async () => {
    const r = await receiver(503);
    const id = await publish(event(r.url));
    const view = await finished(id);
    expect(view).toMatchObject({
      status: 'failed',
      attempt_count: GAPS_MS.length + 1,
      last_error: 'HTTP 503',
    });
    expect(view.attempts).toHaveLength(GAPS_MS.length + 1);
    // The schedule as the workflow recorded it: one durable timer of each gap, in order.
    const { events } = await stack.client.workflow.getHandle(`notification:${id}`).fetchHistory();
    const timers = (events ?? [])
      .filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED)
      .map((e) => tsToMs(e.timerStartedEventAttributes!.startToFireTimeout));
    expect(timers).toEqual(GAPS_MS);
    // And each attempt was made after its gap.
    const times = view.attempts.map((a) => Date.parse(a.attempted_at));
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(GAPS_MS[i]!));
    expect(r.received).toHaveLength(GAPS_MS.length + 1);
  });

  test('when the receiver redirects, then the redirect is not followed and the attempt fails', async () => {
    const target = await receiver(200);
    const r = (await receiver(302, 200)).redirectTo(target.url);
    const id = await publish(event(r.url));
    // Counted once the notification is done: a redirect followed late would show.
    const view = await finished(id);
    expect(view.status).toBe('delivered');
    expect(view.attempts[0]).toMatchObject({ attempt: 1, http_status: 302, error: 'HTTP 302' });
    expect(r.received).toHaveLength(2);
    expect(target.received).toHaveLength(0);
  });

  test('when the receiver is unreachable, then the attempt records the connection error', async () => {
    const r = await receiver(200);
    await r.stop();
    const id = await publish(event(r.url));
    const view = await finished(id);
    expect(view.status).toBe('failed');
    expect(view.attempts[0]!.http_status).toBeNull();
    expect(view.attempts[0]!.error).toMatch(/ECONNREFUSED/);
  });

  test('when the same event is published twice, then one notification and one delivery', async () => {
    const r = await receiver(200);
    const req = event(r.url);
    const first = await publish(req);
    expect(await publish(req)).toBe(first);
    await finished(first);
    expect(r.received).toHaveLength(1);
  });
});

describe("the publisher's first attempt", () => {
  async function history(notificationId: string) {
    const handle = stack.client.workflow.getHandle(`notification:${notificationId}`);
    await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    const count = (type: keyof typeof EventType) =>
      events.filter((e) => e.eventType === EventType[type]).length;
    return { handle, count };
  }

  test('when the receiver answers 200, then the attempt is on record before publish returns and no workflow is started', async () => {
    const r = await receiver(200);
    const req = event(r.url);
    const id = await publish(req);
    // Made by the publisher itself: on record and received already.
    expect(r.received).toHaveLength(1);
    const row = notificationView((await repo.find(app.app_id, id))!);
    expect(row).toMatchObject({ status: 'delivered', series: 1, attempt_count: 1 });
    // Settled at once, it is a row only: Temporal holds nothing for it.
    await expect(stack.client.workflow.getHandle(`notification:${id}`).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    // Published again (a retried producer), it is neither sent again nor given a workflow.
    expect(await publish(req)).toBe(id);
    await expect(stack.client.workflow.getHandle(`notification:${id}`).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    expect(r.received).toHaveLength(1);
  });

  test('when the destination is refused at the first attempt, then the notification is failed at once with no workflow', async () => {
    const guarded = await guardedStack();
    try {
      const owner = await guarded.createApp(['payments']);
      const r = await receiver(200);
      const id = await createActivities(guarded.activityDeps).publishNotification({
        ...event(r.url),
        appId: owner.app_id,
      });
      const view = notificationView(
        (await new NotificationRepository(guarded.database.db).find(owner.app_id, id))!,
      );
      expect(view).toMatchObject({ status: 'failed', attempt_count: 1 });
      expect(view.last_error).toMatch(/127\.0\.0\.1/);
      await expect(guarded.client.workflow.getHandle(`notification:${id}`).describe()).rejects.toThrow(
        WorkflowNotFoundError,
      );
      expect(r.received).toHaveLength(0);
    } finally {
      await guarded.stop();
    }
  });

  test('when the first attempt fails, then the workflow waits the first gap and goes on from attempt 2', async () => {
    const r = await receiver(500, 200);
    const id = await publish(event(r.url));
    const view = await finished(id);
    expect(view.attempts.map((a) => [a.series, a.attempt, a.http_status])).toEqual([
      [1, 1, 500],
      [1, 2, 200],
    ]);
    const [t1, t2] = view.attempts.map((a) => Date.parse(a.attempted_at));
    expect(t2! - t1!).toBeGreaterThanOrEqual(GAPS_MS[0]!);
    const { count } = await history(id);
    expect(count('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')).toBe(1);
    expect(
      (await stack.client.workflow.getHandle(`notification:${id}`).describe()).searchAttributes.BizStatus,
    ).toEqual(['delivered']);
  });

  test('when an event whose first attempt failed is published again, then attempt 1 is not sent again', async () => {
    const r = await receiver(500, 200);
    const req = event(r.url);
    const id = await publish(req);
    expect(await publish(req)).toBe(id);
    const view = await finished(id);
    expect(view.attempts.map((a) => [a.attempt, a.http_status])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(r.received).toHaveLength(2);
  });

  test('when a resend has opened a later series and the event is published again, then nothing more is sent', async () => {
    const r = await receiver(200);
    const req = event(r.url);
    const id = await publish(req);
    await finished(id);
    const res = await signedFetch(stack.baseUrl, app, 'POST', `/api/v1/notifications/${id}/resend`);
    expect(res.status).toBe(200);
    expect(await finished(id)).toMatchObject({ status: 'delivered', series: 2 });
    expect(await publish(req)).toBe(id);
    const view = notificationView((await repo.find(app.app_id, id))!);
    expect(view.attempts.map((a) => [a.series, a.attempt])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(r.received).toHaveLength(2);
  });

  test('when the notification was stored before a publisher made first attempts, then publishing it again leaves attempt 1 to its workflow', async () => {
    const r = await receiver(200);
    const req = event(r.url);
    // Stored, as by a publisher that failed right after the insert (or one from before).
    const { notificationId } = await repo.insertOrGet(req);
    expect(await publish(req)).toBe(notificationId);
    const view = await finished(notificationId);
    expect(view.attempts.map((a) => [a.series, a.attempt])).toEqual([[1, 1]]);
    const { count } = await history(notificationId);
    expect(count('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')).toBe(1);
    expect(r.received).toHaveLength(1);
  });
});

describe('GET /api/v1/notifications', () => {
  test('when notifications exist, then they are listed newest first with their attempts, filtered by trade_no and status', async () => {
    const r = await receiver(200);
    const a = event(r.url);
    const b = event(r.url);
    const idA = await publish(a);
    await finished(idA);
    const idB = await publish(b);
    await finished(idB);

    const all = await envelope<{ list: NotificationView[]; limit: number; offset: number }>(
      await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/notifications?limit=2'),
    );
    expect(all.code).toBe('success');
    expect(all.data!.limit).toBe(2);
    expect(all.data!.offset).toBe(0);
    expect(all.data!.list.map((n) => n.notification_id)).toEqual([idB, idA]);
    expect(all.data!.list[0]!.attempts).toEqual([expect.objectContaining({ attempt: 1, http_status: 200 })]);

    const byTrade = await envelope<{ list: NotificationView[] }>(
      await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/notifications?trade_no=${a.tradeNo}`),
    );
    expect(byTrade.data!.list.map((n) => n.notification_id)).toEqual([idA]);
    expect(byTrade.data!.list[0]).toMatchObject({
      type: 'payment.succeeded',
      status: 'delivered',
      trade_no: a.tradeNo,
      url: r.url,
      payload: { type: 'payment.succeeded', data: { trade_no: a.tradeNo, app_id: app.app_id } },
    });

    const failedOnly = await envelope<{ list: NotificationView[] }>(
      await signedFetch(
        stack.baseUrl,
        app,
        'GET',
        `/api/v1/notifications?trade_no=${a.tradeNo}&status=failed`,
      ),
    );
    expect(failedOnly.data!.list).toEqual([]);
  });

  test.each([
    ['limit=abc', { limit: 0, offset: 0 }],
    ['limit=1000&offset=-5', { limit: 100, offset: 0 }],
    ['', { limit: 20, offset: 0 }],
  ])('when the query is %p, then the page used is %p', async (query, page) => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/notifications?${query}`);
    const body = await envelope<{ list: unknown[]; limit: number; offset: number }>(res);
    expect(res.status).toBe(200);
    expect({ limit: body.data!.limit, offset: body.data!.offset }).toEqual(page);
    if (page.limit === 0) expect(body.data!.list).toEqual([]);
  });

  test.each([
    ['status=sent', '"status" must be one of [pending, delivered, failed, ]'],
    ['colour=red', '"colour" is not allowed'],
    ['trade_no=a&trade_no=b', '"trade_no" must be a string'],
  ])('when the query has %p, then 400 invalid_param naming the field', async (query, message) => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/notifications?${query}`);
    expect(res.status).toBe(400);
    expect(await envelope(res)).toMatchObject({ code: 'invalid_param', message, data: null });
  });

  test("when another app lists notifications, then it sees none of this app's", async () => {
    const r = await receiver(200);
    const req = event(r.url);
    await finished(await publish(req));
    const other = await stack.createApp(['payments']);
    const res = await signedFetch(
      stack.baseUrl,
      other,
      'GET',
      `/api/v1/notifications?trade_no=${req.tradeNo}`,
    );
    expect((await envelope<{ list: unknown[] }>(res)).data!.list).toEqual([]);
    const all = await signedFetch(stack.baseUrl, other, 'GET', '/api/v1/notifications');
    expect((await envelope<{ list: unknown[] }>(all)).data!.list).toEqual([]);
  });
});

describe('POST /api/v1/notifications/{id}/resend', () => {
  test('when a delivered notification is resent, then a fresh series delivers it again with the same webhook-id', async () => {
    const r = await receiver(200);
    const id = await publish(event(r.url));
    await finished(id);
    const res = await signedFetch(stack.baseUrl, app, 'POST', `/api/v1/notifications/${id}/resend`);
    expect(res.status).toBe(200);
    expect((await envelope(res)).data).toEqual({ notification_id: id, status: 'pending' });
    const view = await finished(id);
    expect(view).toMatchObject({ status: 'delivered', series: 2 });
    expect(view.attempts.map((a) => [a.series, a.attempt])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(r.received.map((x) => x.headers['webhook-id'])).toEqual([id, id]);
  });

  test('when a failed notification is resent and the receiver has recovered, then it ends delivered', async () => {
    const r = await receiver(500);
    const id = await publish(event(r.url));
    expect((await finished(id)).status).toBe('failed');
    r.answer(200);
    const res = await signedFetch(stack.baseUrl, app, 'POST', `/api/v1/notifications/${id}/resend`, {
      json: {},
    });
    expect(res.status).toBe(200);
    const view = await finished(id);
    expect(view).toMatchObject({ status: 'delivered', series: 2, last_error: null });
    expect(view.attempts.filter((a) => a.series === 2)).toEqual([
      expect.objectContaining({ attempt: 1, http_status: 200 }),
    ]);
  });

  test("when another app's or an unknown notification is resent, then 404 notification_not_found", async () => {
    const r = await receiver(200);
    const id = await publish(event(r.url));
    await finished(id);
    const other = await stack.createApp(['payments']);
    for (const [creds, target] of [
      [other, id],
      [app, 'ntf_aaaaaaaaaaaaaaaaaaaa'],
    ] as const) {
      const res = await signedFetch(stack.baseUrl, creds, 'POST', `/api/v1/notifications/${target}/resend`);
      expect(res.status).toBe(404);
      expect(await envelope(res)).toEqual({
        code: 'notification_not_found',
        message: 'notification not found',
        data: null,
        request_id: res.headers.get('x-request-id'),
      });
    }
    expect(r.received).toHaveLength(1);
  });

  test('when the resend body has unknown fields, then 400 invalid_param', async () => {
    const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/notifications/ntf_x/resend', {
      json: { now: true },
    });
    expect(res.status).toBe(400);
    expect((await envelope(res)).message).toBe('"now" is not allowed');
  });
});

/** A stack that refuses private destinations, as production does. */
const guardedStack = () =>
  startTestStack({ guardAddresses: true, notifications: { retryScheduleMs: GAPS_MS, timeoutMs: 2_000 } });

describe('address guard (production mode)', () => {
  test('when notify_url resolves to a loopback address, then the notification fails with that reason and nothing is sent', async () => {
    const guarded = await guardedStack();
    try {
      const owner = await guarded.createApp(['payments']);
      const r = await receiver(200);
      const gRepo = new NotificationRepository(guarded.database.db);
      const req = { ...event(r.url), appId: owner.app_id };
      const { notificationId } = await gRepo.insertOrGet(req);
      const outcome = await guarded.client.workflow.execute('notificationWorkflow', {
        taskQueue: guarded.taskQueue,
        workflowId: `notification:${notificationId}`,
        args: [{ notificationId, appId: owner.app_id, gapsMs: GAPS_MS }],
      });
      expect(outcome).toBe('failed');
      const view = notificationView((await gRepo.find(owner.app_id, notificationId))!);
      expect(view.attempts).toHaveLength(1);
      expect(view.last_error).toMatch(/127\.0\.0\.1/);
      expect(r.received).toHaveLength(0);
    } finally {
      await guarded.stop();
    }
  });
});

describe('address guard (production mode), through the API', () => {
  test("when an order's notify_url is the IPv4-compatible IPv6 form of loopback, then its payment notification fails at once naming the loopback address and nothing is sent", async () => {
    const guarded = await guardedStack();
    try {
      const owner = await guarded.createApp(['payments']);
      const r = await receiver(200);
      const port = new URL(r.url).port;
      const pay = paymentsClient(guarded, owner, r);
      const order = await pay.paidOrder({ notify_url: `http://[::127.0.0.1]:${port}/hooks/durapay` });
      const failed = await until('the payment notification failed', async () => {
        const res = await signedFetch(
          guarded.baseUrl,
          owner,
          'GET',
          `/api/v1/notifications?trade_no=${order.trade_no}&status=failed`,
        );
        const list = ((await envelope(res)).data as { list: NotificationView[] }).list;
        return list.length > 0 ? list : undefined;
      });
      expect(failed).toHaveLength(1);
      expect(failed[0]!.attempts).toHaveLength(1);
      expect(failed[0]!.last_error).toBe(
        'notify_url host "::7f00:1" resolves to ::7f00:1, a loopback address (127.0.0.1 in an IPv6 form)',
      );
      expect(r.received).toHaveLength(0);
    } finally {
      await guarded.stop();
    }
  });
});

describe('worker crash between attempts', () => {
  const workerEnv = () => ({
    DATABASE_URL: stack.database.url,
    DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
  });

  test('when the worker is killed while waiting between attempts, then a new worker continues the schedule with no attempt lost or doubled', async () => {
    const taskQueue = uniqueName('tq-notify-kill');
    const gaps = [100, 4_000, 100, 100];
    const r = await receiver(500, 500, 200);
    const first = spawnWorker(taskQueue, workerEnv());
    await first.ready;
    const req = event(r.url, { eventKey: `kill:${randomUUID()}` });
    const { notificationId } = await repo.insertOrGet(req);
    const handle = await stack.client.workflow.start('notificationWorkflow', {
      taskQueue,
      workflowId: `notification:${notificationId}`,
      args: [{ notificationId, appId: app.app_id, gapsMs: gaps }],
    });
    // Attempt 2 failed and is recorded; the workflow now waits 4 s on a durable timer. Kill the
    // worker then (not merely once the receiver has seen attempt 2: a worker killed between the
    // POST and its record rightly posts that attempt again).
    const deadline = Date.now() + 30_000;
    const recorded = async () => (await repo.find(app.app_id, notificationId))?.attempts?.length ?? 0;
    while ((await recorded()) < 2 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(r.received).toHaveLength(2);
    first.child.kill('SIGKILL');
    await new Promise((res) => first.child.once('exit', res));

    const second = spawnWorker(taskQueue, workerEnv());
    try {
      await second.ready;
      expect(await handle.result()).toBe('delivered');
      const view = notificationView((await repo.find(app.app_id, notificationId))!);
      expect(view.attempts.map((a) => [a.attempt, a.http_status])).toEqual([
        [1, 500],
        [2, 500],
        [3, 200],
      ]);
      expect(r.received).toHaveLength(3);
      const t = view.attempts.map((a) => Date.parse(a.attempted_at));
      expect(t[2]! - t[1]!).toBeGreaterThanOrEqual(4_000);
    } finally {
      await second.stop();
    }
  });
});
