/**
 * The hosted checkout's rules (SPEC §15): pure, shared by its service and its pages.
 */

/** The most payments one link may take. */
export const MAX_LINK_PAYMENTS = 10_000;

/**
 * How long an order a buyer opens through a link stays payable: it holds one of the link's
 * payments while pending, so a buyer who walks away gives the place back after this.
 */
export const LINK_ORDER_EXPIRE_MINUTES = 10;

/** A hold whose request died before it made its order stops counting after this. */
export const LINK_HOLD_STALE_MS = 2 * 60_000;

/** How long a wallet's sign-in round trip may take before its state is refused. */
export const SIGN_IN_STATE_MS = 10 * 60_000;

export type LinkStatus = 'active' | 'deactivated' | 'expired' | 'completed';

export interface LinkFacts {
  status: 'active' | 'deactivated';
  expiresAt: Date | null;
  maxPayments: number;
  paidCount: number;
}

/** What a link is now: deactivated, past its expiry, paid as often as it may be, or active. */
export function linkStatusOf(link: LinkFacts, now: Date): LinkStatus {
  if (link.status === 'deactivated') return 'deactivated';
  if (link.paidCount >= link.maxPayments) return 'completed';
  if (link.expiresAt !== null && link.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/**
 * Minutes an order opened through a link may stay pending: LINK_ORDER_EXPIRE_MINUTES, never past
 * the link's own expiry (at least one minute).
 */
export function linkOrderMinutes(expiresAt: Date | null, now: Date): number {
  if (expiresAt === null) return LINK_ORDER_EXPIRE_MINUTES;
  const left = Math.floor((expiresAt.getTime() - now.getTime()) / 60_000);
  return Math.max(1, Math.min(LINK_ORDER_EXPIRE_MINUTES, left));
}

/** Which browser the buyer opened the page in, by its user agent. */
export type BuyerBrowser = { wallet: string } | { wallet: null };

/** The order number durapay gives the order a buyer makes through a link: the link and the hold. */
export const linkOrderNo = (linkId: string, holdId: string) => `${linkId}-${holdId}`;
