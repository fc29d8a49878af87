/** The values the API's filters take (SPEC; the server's rules are the source, these only fill menus). */
export const CHANNELS = ['sandbox', 'wechatpay', 'alipay'] as const;
export const ORDER_STATUSES = ['pending', 'paid', 'partially_refunded', 'refunded', 'closed'] as const;
export const REFUND_STATUSES = ['processing', 'success', 'failed', 'abnormal'] as const;
export const TRANSFER_STATUSES = [
  'processing',
  'wait_user_confirm',
  'success',
  'failed',
  'cancelled',
] as const;
export const NOTIFICATION_STATUSES = ['failed', 'pending', 'delivered'] as const;
export const MERCHANT_STATUSES = ['created', 'auditing', 'active', 'rejected'] as const;
export const RUN_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export const MISMATCH_CATEGORIES = [
  'missing_local_payment',
  'missing_channel_payment',
  'amount_mismatch',
  'status_mismatch',
  'unknown_at_durapay',
] as const;
export const NOTIFICATION_EVENTS = [
  'payment.succeeded',
  'payment.closed',
  'refund.succeeded',
  'refund.failed',
  'refund.abnormal',
  'merchant.application.updated',
  'merchant.channel_account.updated',
  'transfer.succeeded',
  'transfer.failed',
  'transfer.cancelled',
  'reconciliation.completed',
  'reconciliation.mismatch',
] as const;
/** How a mismatch was settled; a note alone records it `ignored`. */
export const RESOLUTIONS = [
  { value: 'ignored', label: 'Ignored: nothing to correct' },
  { value: 'accepted_channel', label: "The channel's record is right" },
  { value: 'accepted_durapay', label: "durapay's record is right" },
] as const;
export const MISMATCH_STATES = ['open', 'carried', 'repaired', 'resolved'] as const;

/** The account fields each channel takes when one is attached to a merchant (docs/merchants.md). */
export const ACCOUNT_FIELDS: Record<string, { name: string; label: string }[]> = {
  sandbox: [{ name: 'sub_merchant_no', label: 'Sub-merchant number' }],
  wechatpay: [{ name: 'sub_mchid', label: 'Sub-merchant id (sub_mchid)' }],
  alipay: [
    { name: 'smid', label: 'Secondary merchant id (smid)' },
    { name: 'app_auth_token', label: 'App auth token' },
  ],
};
