import { createHash } from 'node:crypto';
import { CheckoutSigner } from '../../src/modules/checkout/state';
import { fenOf } from '../../src/modules/checkout/service';
import { linkOrderMinutes, linkStatusOf } from '../../src/modules/checkout/rules';
import { Keyring } from '../../src/platform/crypto/keyring';

/** A ring whose keys are named by their ids (a key's bytes follow from its id). */
const ring = (...ids: string[]) =>
  new Keyring(ids.map((id) => ({ id, key: createHash('sha256').update(id).digest() })));

describe('the checkout rules', () => {
  test('when a buyer types yuan, then whole and one- or two-decimal amounts are fen, anything else is refused', () => {
    expect(fenOf('12')).toBe(1_200);
    expect(fenOf(' 12.5 ')).toBe(1_250);
    expect(fenOf('0.01')).toBe(1);
    expect(fenOf('999999999.99')).toBe(99_999_999_999);
    for (const bad of ['', '1.234', '-1', '1e3', '12,50', '.5', '1.', 'ten', '1234567890']) {
      expect(fenOf(bad)).toBeUndefined();
    }
  });

  test('when a link is deactivated, paid up or past its expiry, then its status says which, deactivation first', () => {
    const now = new Date('2026-12-02T10:00:00Z');
    const link = { status: 'active' as const, expiresAt: null, maxPayments: 2, paidCount: 1 };
    expect(linkStatusOf(link, now)).toBe('active');
    expect(linkStatusOf({ ...link, paidCount: 2 }, now)).toBe('completed');
    expect(linkStatusOf({ ...link, expiresAt: now }, now)).toBe('expired');
    expect(linkStatusOf({ ...link, status: 'deactivated', paidCount: 2 }, now)).toBe('deactivated');
  });

  test("when a link expires sooner than an order's 10 minutes, then its orders expire with it, never under a minute", () => {
    const now = new Date('2026-12-02T10:00:00Z');
    expect(linkOrderMinutes(null, now)).toBe(10);
    expect(linkOrderMinutes(new Date('2026-12-02T10:04:30Z'), now)).toBe(4);
    expect(linkOrderMinutes(new Date('2026-12-02T10:00:10Z'), now)).toBe(1);
    expect(linkOrderMinutes(new Date('2026-12-03T10:00:00Z'), now)).toBe(10);
  });

  test('when a state is checked, then only its own subject verifies it, under any key of the ring, and a forged one never', () => {
    const signer = new CheckoutSigner(ring('2026-12'));
    const subject = { kind: 'link' as const, ref: 'pl_a', channelCode: 'wechatpay' };
    const { nonce, state } = signer.newState(subject);
    expect(state).toMatch(/^[A-Za-z0-9]{52}$/);
    expect(signer.nonceOf(state, subject)).toBe(nonce);
    expect(signer.nonceOf(state, { ...subject, ref: 'pl_b' })).toBeUndefined();
    expect(signer.nonceOf(state, { ...subject, channelCode: 'alipay' })).toBeUndefined();
    expect(signer.nonceOf(state, { ...subject, kind: 'code' })).toBeUndefined();
    expect(
      signer.nonceOf(`${state.slice(0, 51)}${state.endsWith('0') ? '1' : '0'}`, subject),
    ).toBeUndefined();
    // Rotated: the new key first, the old one still verifies what it signed.
    expect(new CheckoutSigner(ring('2027-01', '2026-12')).nonceOf(state, subject)).toBe(nonce);
    expect(new CheckoutSigner(ring('other')).nonceOf(state, subject)).toBeUndefined();
  });

  test("when an order's page token is read, then only its own MAC names the order", () => {
    const signer = new CheckoutSigner(ring('2026-12'));
    const token = signer.orderToken('P202612021000000000000001');
    expect(signer.tradeNoOf(token)).toBe('P202612021000000000000001');
    expect(signer.tradeNoOf(token.replace('P2026', 'P2025'))).toBeUndefined();
    expect(signer.tradeNoOf('P202612021000000000000001')).toBeUndefined();
  });
});
