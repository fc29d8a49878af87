/** Refund rules of SPEC §3.5–3.6. */

/** `abnormal` (SPEC §3.5): the money left the order; an operator has it paid out another way. */
export type RefundStatus = 'processing' | 'success' | 'failed' | 'abnormal';
