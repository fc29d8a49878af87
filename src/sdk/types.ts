// Longer than 400 lines on purpose: every wire type of the API in one file, as the document has them.
/**
 * Wire types of the durapay API (SPEC §3, §5, §6), field names exactly as sent and received.
 * Times are RFC 3339 strings in UTC; money is an integer count of the currency's minor unit.
 */

import type {
  AccountChannelCode,
  AccountKindOf,
  NumberAccountKind,
  PayeeType,
  TokenAccountKind,
} from '../channels/registry';

/** `barcode`: the cashier scans the code in the buyer's wallet (付款码, §14). */
export type PayMethod =
  | 'qr_code'
  | 'jsapi'
  | 'mini_program'
  | 'app'
  | 'h5'
  | 'web'
  | 'barcode'
  | 'checkout'
  /** A recurring contract's deduction (§17): made by the contract, never by createOrder. */
  | 'contract';

export type OrderStatus = 'pending' | 'paid' | 'partially_refunded' | 'refunded' | 'closed';

export type ProfitSharingStatus =
  'none' | 'pending' | 'processing' | 'finished' | 'failed' | 'cancelled' | 'returned';

/** `abnormal`: the money left the order but the buyer's account could not take it (§3.5). */
export type RefundStatus = 'processing' | 'success' | 'failed' | 'abnormal';

export type MerchantStatus = 'created' | 'auditing' | 'active' | 'rejected';

export type ApplicationStatus =
  'submitted' | 'auditing' | 'to_be_confirmed' | 'to_be_signed' | 'finished' | 'rejected' | 'canceled';

export type UploadMediaType = 'image/jpeg' | 'image/png' | 'image/bmp' | 'application/pdf';

/** §3.1 */
export interface CreateOrderInput {
  merchant_order_no: string;
  pay_method: PayMethod;
  amount: number;
  subject: string;
  notify_url: string;
  channel_code?: string;
  expire_minutes?: number;
  profit_sharing_amount?: number;
  merchant_id?: string;
  /** Channel-specific, e.g. `openid` for `jsapi`, `client_ip` for `h5`, `sandbox` fault injection. */
  extra?: Record<string, unknown>;
  /** `barcode` only, and required there: the code scanned from the buyer's wallet (§14). */
  auth_code?: string;
  /** `barcode` only: the till and the shop, passed to the channel. */
  device_id?: string;
  store_id?: string;
}

export interface CreateOrderResult {
  trade_no: string;
  /**
   * Shape depends on channel and pay method (sandbox: `pay_url`, `qr_code`; with `qr_image` for
   * `qr_code`; `checkout`: `checkout_url` and its `qr_code` image, §15).
   */
  pay_credential: Record<string, unknown>;
  is_idempotent: boolean;
  /** `barcode` only (§14): `paid`, or `paying` while the buyer confirms (query the order). */
  status?: 'paid' | 'paying';
}

/** §3.3 */
export interface Order {
  trade_no: string;
  merchant_order_no: string;
  pay_method: PayMethod;
  amount: number;
  status: OrderStatus;
  channel_trade_no: string | null;
  pay_time: string | null;
  created_at: string;
  /** Null for a `checkout` order until its buyer picks a channel on the hosted page (§15). */
  channel_code: string | null;
  /** A `checkout` order's way of paying at the channel its buyer picked (`jsapi`, `h5`). */
  channel_pay_method: string | null;
  subject: string;
  merchant_id: string | null;
  refunded_amount: number;
  profit_sharing_amount: number;
  profit_sharing_status: ProfitSharingStatus;
  /** What the share gave the receivers (§3.7). */
  profit_shared_amount: number;
  /** What came back from the receivers for refunds (§3.7). */
  profit_returned_amount: number;
  expire_time: string;
  closed_at: string | null;
  /** A closed barcode order (§14): the channel `refused` its code, or durapay `reversed` it. */
  close_reason: 'refused' | 'reversed' | null;
  /** A barcode order's till and shop. */
  device_id: string | null;
  store_id: string | null;
  /** An order a buyer made through a payment link (§15). */
  payment_link_id: string | null;
  /** An order a buyer paid at a merchant's standing code (§15), and the note the buyer left. */
  standing_code_id: string | null;
  buyer_note: string | null;
}

/** §3.5 */
export interface RefundInput {
  trade_no: string;
  refund_amount: number;
  reason?: string;
  notify_url?: string;
  /** Makes the refund idempotent: a repeat returns the existing refund. */
  merchant_refund_no?: string;
}

export interface RefundResult {
  refund_no: string;
  trade_no: string;
  refund_amount: number;
  status: RefundStatus;
  channel_refund_no: string | null;
}

/** §3.5: how an `abnormal` refund is paid out instead. */
export interface AbnormalRefundInput {
  refund_no: string;
  method: 'user_bank_card' | 'merchant_bank_card';
  /** With `user_bank_card`: the bank, the card number and the holder's name (sent sealed). */
  bank_type?: string;
  bank_account?: string;
  real_name?: string;
}

export interface AbnormalRefundResult {
  refund_no: string;
  trade_no: string;
  refund_amount: number;
  /** Still `abnormal` until the channel has paid it out. */
  status: 'abnormal' | 'success';
  channel_refund_no: string | null;
}

/** §3.6 */
export interface Refund extends RefundResult {
  refund_time: string | null;
  reason: string | null;
  merchant_refund_no: string | null;
  created_at: string;
}

/** §5.1 */
export interface ProfitSharingReceiver {
  type: string;
  account: string;
  name?: string;
  weight: number;
}

/** A merchant's profit sharing as given when it is created. */
export interface ProfitSharingInput {
  receivers: ProfitSharingReceiver[];
  /** In (0, 1]; the service applies 0.30 when it is not given. */
  max_ratio?: number;
}

/** A merchant's profit sharing as the service answers it. */
export interface ProfitSharing {
  receivers: ProfitSharingReceiver[];
  max_ratio: number;
}

export interface CreateMerchantInput {
  merchant_id: string;
  merchant_name: string;
  license_no?: string;
  legal_person?: string;
  bank_account?: string;
  profit_sharing?: ProfitSharingInput;
}

export interface CreatedMerchant {
  merchant_id: string;
}

/** §5.2 */
export interface Merchant {
  merchant_id: string;
  merchant_name: string;
  license_no: string | null;
  legal_person: string | null;
  /** Masked: all but the last 4 digits are `*`. */
  bank_account: string | null;
  status: MerchantStatus;
  channel_code: string | null;
  sub_merchant_no: string | null;
  profit_sharing: ProfitSharing | null;
  /** §5.8: its attached accounts, the most recently activated first. */
  channel_accounts: ChannelAccount[];
  created_at: string;
  updated_at: string;
}

/**
 * §5.8: the fields that name an account at each channel, one field each, as the channels declare
 * them in their descriptors (src/channels/registry.ts): `{ sub_mchid }`, `{ smid }`, ….
 */
export type ChannelAccountFields = AccountKindOf extends infer K
  ? K extends string
    ? { [F in K]: string }
    : never
  : never;

/** §5.8: a merchant's account at one channel: its number, or a token masked with the `user_id` it is for. */
export type ChannelAccount = {
  channel_code: AccountChannelCode;
} & { [F in NumberAccountKind]?: string } & { [F in TokenAccountKind]?: string | null } & {
  user_id?: string | null;
  status: 'active' | 'expired';
  source: 'onboarding' | 'attached' | 'authorized' | 'migrated';
  token_expires_at?: string | null;
  activated_at: string;
  updated_at: string;
};

export interface ChannelAccountList {
  merchant_id: string;
  list: ChannelAccount[];
}

export interface DetachedChannelAccount {
  merchant_id: string;
  channel_code: string;
  detached_at: string;
}

export interface StartAuthorizationInput {
  redirect_url?: string;
  notify_url?: string;
}

export interface AuthorizationStarted {
  authorize_url: string;
  expires_at: string;
}

/** §5.3 */
export interface ListMerchantsParams {
  /** Empty means no filter. */
  status?: MerchantStatus | '';
  limit?: number;
  offset?: number;
}

/** §5.3, §6: `limit` and `offset` echo the values the service used. */
export interface Page<T> {
  list: T[];
  limit: number;
  offset: number;
}

/** §5.5 */
export interface UploadMerchantFileInput {
  file: Buffer;
  /** Only its base name is forwarded to the channel. */
  fileName: string;
  fileMediaType: UploadMediaType;
  channelCode?: string;
}

export interface UploadedFile {
  /** As assigned by the channel. */
  file_id: string;
}

/** §5.6 */
export interface ApplyMerchantInput {
  channel_code: string;
  submit_data?: Record<string, unknown>;
  notify_url?: string;
}

export interface CreatedApplication {
  application_id: string;
}

/** §5.7 */
export interface MerchantApplication {
  application_id: string;
  merchant_id: string;
  channel_code: string;
  status: ApplicationStatus;
  channel_application_no: string | null;
  sub_merchant_no: string | null;
  sign_url: string | null;
  reject_reason: string | null;
  audit_detail: unknown;
  submitted_at: string | null;
  updated_at: string;
  finished_at: string | null;
}

/** §6 */
export type NotificationEventType =
  | 'payment.succeeded'
  | 'payment.closed'
  | 'refund.succeeded'
  | 'refund.failed'
  | 'refund.abnormal'
  | 'transfer.succeeded'
  | 'transfer.failed'
  | 'transfer.cancelled'
  | 'merchant.application.updated'
  | 'merchant.channel_account.updated'
  | 'reconciliation.completed'
  | 'reconciliation.mismatch'
  | 'complaint.created'
  | 'complaint.updated'
  | 'complaint.reply_due'
  | 'complaint.overdue'
  | 'contract.signed'
  | 'contract.cancelled'
  | 'contract.deduction_failed'
  | 'contract.ended';

export type NotificationStatus = 'pending' | 'delivered' | 'failed';

export interface ListNotificationsParams {
  trade_no?: string;
  refund_no?: string;
  /** Empty means no filter. */
  status?: NotificationStatus | '';
  limit?: number;
  offset?: number;
}

/** One delivery attempt: its HTTP status, or the error when there was none. */
export interface NotificationAttempt {
  /** Counts resends: each starts a fresh series of attempts. */
  series: number;
  attempt: number;
  attempted_at: string;
  http_status: number | null;
  latency_ms: number | null;
  error: string | null;
}

/** A merchant notification with every recorded delivery attempt. */
export interface Notification {
  notification_id: string;
  type: NotificationEventType;
  status: NotificationStatus;
  url: string;
  trade_no: string | null;
  refund_no: string | null;
  application_id: string | null;
  /** The body POSTed to `url`: `{type, timestamp, data}`. */
  payload: { type: NotificationEventType; timestamp: string; data: Record<string, unknown> };
  series: number;
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
  attempts: NotificationAttempt[];
}

export interface ResentNotification {
  notification_id: string;
  status: 'pending';
}

/** §1: the codes of a failure (`DurapayError.code`). */
export type ErrorCode =
  | 'invalid_param'
  | 'missing_param'
  | 'invalid_pay_method'
  | 'invalid_amount'
  | 'unauthorized'
  | 'app_not_found'
  | 'permission_denied'
  | 'order_not_found'
  | 'order_already_paid'
  | 'order_closed'
  | 'refund_amount_exceed'
  | 'sharing_amount_exceed'
  | 'order_not_paid'
  | 'sharing_not_config'
  | 'sharing_fee_exceed'
  | 'refund_not_found'
  | 'transfer_not_found'
  | 'channel_create_fail'
  | 'channel_refund_fail'
  | 'channel_transfer_fail'
  | 'channel_timeout'
  | 'channel_not_support'
  | 'channel_verify_fail'
  | 'internal_system'
  | 'database_error'
  | 'rate_limited'
  | 'not_found'
  | 'notification_not_found'
  | 'reconciliation_not_found'
  | 'link_not_found'
  | 'complaint_not_found'
  | 'complaint_processed'
  | 'contract_not_found'
  | 'contract_ended';

/** §10 */
export type ReconciliationCategory =
  | 'missing_local_payment'
  | 'missing_channel_payment'
  | 'amount_mismatch'
  | 'status_mismatch'
  | 'unknown_at_durapay';

export interface ReconciliationSummary {
  statement: 'ready' | 'empty';
  rows: number;
  matched: number;
  categories: Record<ReconciliationCategory, number>;
  carried: number;
  repaired: number;
  channel: { paid: number; refunded: number; fees: number };
  durapay: { paid: number; refunded: number };
}

export interface ReconciliationRun {
  run_id: string;
  channel_code: string;
  account: string;
  bill_date: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  statement: 'ready' | 'empty' | null;
  statement_sha256: string | null;
  rows: number;
  summary: ReconciliationSummary | null;
  error: string | null;
  started_by: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface ReconciliationMismatch {
  mismatch_id: string;
  run_id: string;
  category: ReconciliationCategory;
  kind: 'payment' | 'refund';
  trade_no: string;
  refund_no: string | null;
  state: 'open' | 'carried' | 'repaired' | 'resolved';
  durapay: Record<string, unknown> | null;
  channel: Record<string, unknown> | null;
  note: string | null;
  resolution: 'accepted_channel' | 'accepted_durapay' | 'ignored' | null;
  resolved_by: string | null;
  resolved_at: string | null;
  created_at: string;
}

export interface CountedPage<T> {
  list: T[];
  total: number;
  limit: number;
  offset: number;
}

export interface StartReconciliationRequest {
  channel_code: string;
  bill_date: string;
  account?: string;
  notify_url?: string;
}

export interface ListReconciliationRunsParams {
  channel_code?: string;
  bill_date?: string;
  status?: ReconciliationRun['status'];
  limit?: number;
  offset?: number;
}

export interface ListReconciliationMismatchesParams {
  category?: ReconciliationCategory;
  state?: ReconciliationMismatch['state'];
  limit?: number;
  offset?: number;
}

export interface ResolveMismatchRequest {
  resolution: 'accepted_channel' | 'accepted_durapay' | 'ignored';
  resolved_by: string;
  note?: string;
}

/** §11 */
export type TransferStatus = 'processing' | 'wait_user_confirm' | 'success' | 'failed' | 'cancelled';

/** §11: POST /api/v1/transfer. */
/** §15 */
export interface PaymentLinkInput {
  merchant_link_no: string;
  merchant_id?: string;
  amount: number;
  subject: string;
  notify_url: string;
  /** ISO 8601, in the future; never expires when absent. */
  expires_at?: string;
  /** Default 1. */
  max_payments?: number;
}

export interface PaymentLink {
  link_id: string;
  merchant_link_no: string;
  merchant_id: string | null;
  amount: number;
  subject: string;
  notify_url: string;
  expires_at: string | null;
  max_payments: number;
  /** Its paid orders, refunded ones included. */
  paid_count: number;
  status: 'active' | 'deactivated' | 'expired' | 'completed';
  /** The page buyers open. */
  url: string;
  /** `url` as a QR image (an SVG data: URL). */
  qr_code: string;
  created_at: string;
  deactivated_at: string | null;
}

export interface ListPaymentLinksParams {
  status?: 'active' | 'deactivated';
  merchant_id?: string;
  limit?: number;
  offset?: number;
}

export interface TransferInput {
  merchant_transfer_no: string;
  channel_code: string;
  merchant_id?: string;
  amount: number;
  /** `type`: one the channel pays (each channel declares its own). */
  payee: { type: PayeeType; account: string; name?: string };
  remark: string;
  /** WeChat Pay's transfer scene; required at `wechatpay`. */
  scene?: {
    transfer_scene_id: string;
    report_infos?: { info_type: string; info_content: string }[];
    user_recv_perception?: string;
  };
  notify_url: string;
}

/** §11: a transfer as durapay has recorded it. */
export interface Transfer {
  transfer_no: string;
  merchant_transfer_no: string;
  channel_code: string;
  merchant_id: string | null;
  amount: number;
  currency: string;
  /** The account masked; the name is never shown. */
  payee: { type: PayeeType; account: string };
  remark: string;
  status: TransferStatus;
  /** While `wait_user_confirm`: `package_info` for `wx.requestMerchantTransfer`. */
  pay_credential: { package_info: string } | null;
  channel_transfer_no: string | null;
  fail_reason: string | null;
  created_at: string;
  finished_at: string | null;
}

/** §16: a consumer complaint about one of the app's orders. */
export interface Complaint {
  complaint_id: string;
  channel_code: string;
  trade_no: string | null;
  order_unknown: boolean;
  merchant_id: string | null;
  sub_merchant_no: string;
  state: 'pending' | 'processing' | 'processed';
  problem_type: 'refund' | 'service_not_work' | 'other';
  apply_refund_amount: number | null;
  /** The payer's words (personal data). */
  detail: string;
  payer_phone: string | null;
  image_count: number;
  history: { operator: string; at: string; type: string; details: string; image_count: number }[];
  complaint_times: number;
  awaits_reply: boolean;
  full_refunded: boolean;
  complained_at: string;
  reply_due_at: string;
  complete_due_at: string;
  replied_at: string | null;
  completed_at: string | null;
  overdue: boolean;
  refund_no: string | null;
  refund_amount: number | null;
  updated_at: string;
}

export interface ComplaintRefunded extends Complaint {
  refund: RefundResult;
}

export interface ComplaintReplyInput {
  /** 1–200 characters. */
  content: string;
  /** Up to 4 images (.jpg, .png, .bmp), their bytes base64. */
  images?: { filename: string; data: string }[];
}

export interface ListComplaintsParams {
  state?: 'pending' | 'processing' | 'processed';
  overdue?: 'true' | 'false';
  merchant_id?: string;
  trade_no?: string;
  limit?: number;
  after?: string;
}

/** §17 */
export type ContractStatus = 'signing' | 'active' | 'cancelled' | 'ended' | 'failed';

export interface ContractPlan {
  period: 'day' | 'week' | 'month';
  every: number;
  amount: number;
  first_at?: string;
  count?: number;
  total_amount?: number;
}

export interface CreateContractInput {
  merchant_contract_no: string;
  channel_code: string;
  merchant_id?: string;
  plan: ContractPlan;
  subject: string;
  notify_url: string;
  return_url?: string;
}

export interface OpenedContract {
  contract_no: string;
  status: ContractStatus;
  sign_url: string | null;
  is_idempotent: boolean;
}

export interface ContractDeduction {
  period: number;
  attempt: number;
  merchant_order_no: string;
  trade_no: string | null;
  amount: number;
  status: 'pending' | 'paid' | 'failed';
  reason: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface Contract {
  contract_no: string;
  merchant_contract_no: string;
  merchant_id: string | null;
  channel_code: string;
  status: ContractStatus;
  subject: string;
  plan: {
    period: 'day' | 'week' | 'month';
    every: number;
    amount: number;
    first_at: string | null;
    count: number | null;
    total_amount: number | null;
  };
  sign_url: string | null;
  channel_contract_id: string | null;
  signed_at: string | null;
  finished_at: string | null;
  cancelled_by: 'merchant' | 'buyer' | null;
  end_reason: string | null;
  periods_done: number;
  deducted_count: number;
  deducted_amount: number;
  next_deduction: { at: string; amount: number } | null;
  last_failure: { period: number; reason: string; at: string } | null;
  deductions: ContractDeduction[];
  notify_url: string;
  return_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface ListContractsParams {
  status?: ContractStatus;
  merchant_id?: string;
  channel_code?: string;
  limit?: number;
  after?: string;
}
