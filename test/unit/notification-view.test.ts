/**
 * A notification as the API and the console show it: stored a moment before its first attempt
 * opens its first series, it is shown in series 1 from the start, as the OpenAPI document says
 * (`series` ≥ 1), never 0.
 */
import { notificationView, type Notification } from '../../src/modules/notifications';

const stored = (series: number) =>
  ({
    notificationId: 'ntf_x',
    eventType: 'payment.succeeded',
    status: 'pending',
    url: 'https://example.com/hook',
    tradeNo: 'P1',
    refundNo: null,
    applicationId: null,
    body: '{"type":"payment.succeeded"}',
    series,
    attemptCount: 0,
    nextAttemptAt: null,
    lastError: null,
    deliveredAt: null,
    createdAt: new Date('2026-12-03T00:00:00Z'),
    updatedAt: new Date('2026-12-03T00:00:00Z'),
    attempts: [],
  }) as unknown as Notification;

describe('notification view', () => {
  test('when a notification is stored and its first series not opened yet, then it shows series 1', () => {
    expect(notificationView(stored(0)).series).toBe(1);
  });

  test('when it was resent, then it shows the series it is in', () => {
    expect(notificationView(stored(1)).series).toBe(1);
    expect(notificationView(stored(3)).series).toBe(3);
  });
});
