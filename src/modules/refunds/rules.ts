/** Refund rules of SPEC §3.5–3.6. */

/** `abnormal` (SPEC §3.5): the money left the order; an operator has it paid out another way. */
export type RefundStatus = 'processing' | 'success' | 'failed' | 'abnormal';

/** SPEC §3.5: a refund is followed (same backoff as a payment) for up to 24 h. */
export const REFUND_POLL_WINDOW_MS = 24 * 3_600_000;
