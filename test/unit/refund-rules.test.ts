/**
 * The refunds' rules for a channel's refund callback (src/modules/refunds/rules.ts, SPEC §4):
 * which refund it names, and whether it still settles anything.
 */
import {
  refundCallbackRefusal,
  refundCallbackSettles,
  type RefundStatus,
} from '../../src/modules/refunds/rules';

describe('refundCallbackRefusal', () => {
  const refund = { tradeNo: 'P1', refundAmount: '40' };
  const asked = { tradeNo: 'P1', refundNo: 'R1', eventRefundNo: 'R1', amount: 40 };

  test('when the refund is of the order and its amount matches, then nothing is refused', () => {
    expect(refundCallbackRefusal(refund, asked)).toBeNull();
  });

  test('when no refund has the number, then unknown_refund naming it', () => {
    expect(refundCallbackRefusal(null, asked)).toEqual({
      outcome: 'unknown_refund',
      message: 'no refund R1',
    });
  });

  test("when the channel's reference names no refund number, then unknown_refund names the event's", () => {
    expect(refundCallbackRefusal(null, { ...asked, refundNo: undefined, eventRefundNo: 'R9' })?.message).toBe(
      'no refund R9',
    );
  });

  test('when the refund is of another order, then unknown_refund', () => {
    expect(refundCallbackRefusal({ ...refund, tradeNo: 'P2' }, asked)?.outcome).toBe('unknown_refund');
  });

  test("when the amount is not the refund's, then amount_mismatch", () => {
    expect(refundCallbackRefusal(refund, { ...asked, amount: 41 })).toEqual({
      outcome: 'amount_mismatch',
      message: 'refund amount 41 does not match',
    });
  });
});

describe('refundCallbackSettles', () => {
  test.each<[RefundStatus, 'success' | 'failed' | 'abnormal', boolean]>([
    ['processing', 'success', true],
    ['processing', 'failed', true],
    ['processing', 'abnormal', true],
    ['abnormal', 'success', true],
    ['abnormal', 'failed', false],
    ['abnormal', 'abnormal', false],
    ['success', 'success', false],
    ['failed', 'success', false],
  ])('when a %s refund hears %s, then it settles: %s', (status, reported, settles) => {
    expect(refundCallbackSettles(status, reported)).toBe(settles);
  });
});
