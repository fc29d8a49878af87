/**
 * What the console's API answers (docs/console.md). The views are the API's own (docs/api.md);
 * fields the console only shows are typed loosely, so that a field added on the server shows up
 * without breaking anything here.
 */

export type Role = 'viewer' | 'operator' | 'admin';
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

export interface Operator {
  operator_id: string;
  username: string;
  role: Role;
  totp_enabled: boolean;
}

export interface Session {
  operator: Operator;
  csrf_token: string;
}

export interface Page<T> {
  list: T[];
  next: string | null;
}

export type Row = Record<string, unknown>;

export interface Order extends Row {
  trade_no: string;
  merchant_order_no: string;
  pay_method: string;
  amount: number;
  status: string;
  channel_trade_no: string | null;
  pay_time: string | null;
  created_at: string | null;
  channel_code: string;
  subject: string;
  merchant_id: string | null;
  refunded_amount: number;
  profit_sharing_amount?: number;
  profit_sharing_status?: string;
  expire_time?: string | null;
  closed_at?: string | null;
  app_id?: string;
  needs_refund_review?: boolean;
}

export interface Refund extends Row {
  refund_no: string;
  trade_no: string;
  refund_amount: number;
  status: string;
  channel_refund_no: string | null;
  refund_time: string | null;
  reason: string | null;
  merchant_refund_no: string | null;
  created_at: string | null;
  app_id?: string;
}

export interface Transfer extends Row {
  transfer_no: string;
  merchant_transfer_no: string;
  channel_code: string;
  merchant_id: string | null;
  amount: number;
  currency?: string;
  payee?: { type: string; account: string | null };
  remark?: string | null;
  status: string;
  fail_reason?: string | null;
  created_at: string | null;
  finished_at?: string | null;
  app_id?: string;
}

export interface NotificationAttempt extends Row {
  series?: number;
  attempt?: number;
  attempted_at?: string;
  http_status?: number | null;
  latency_ms?: number | null;
  error?: string | null;
}

export interface Notification extends Row {
  notification_id: string;
  type: string;
  status: string;
  url: string;
  trade_no?: string | null;
  refund_no?: string | null;
  application_id?: string | null;
  attempt_count?: number;
  next_attempt_at?: string | null;
  last_error?: string | null;
  delivered_at?: string | null;
  created_at?: string;
  updated_at?: string;
  attempts?: NotificationAttempt[];
  app_id?: string;
  payload?: unknown;
}

export interface OrderDetail {
  order: Order;
  refunds: Refund[];
  shares: Row[];
  notifications: Notification[];
  timeline: Row[];
  workflow_url: string | null;
}

export interface ChannelAccount extends Row {
  channel_code: string;
  status: string;
  source?: string;
}

export interface Merchant extends Row {
  merchant_id: string;
  merchant_name: string;
  license_no?: string;
  legal_person?: string;
  bank_account?: string;
  status: string;
  channel_code?: string | null;
  sub_merchant_no?: string | null;
  created_at?: string | null;
  updated_at?: string | null;
  app_id?: string;
}

export interface Application extends Row {
  application_id: string;
  channel_code: string;
  status: string;
  reject_reason?: string | null;
  submitted_at?: string | null;
  updated_at?: string | null;
  finished_at?: string | null;
  audit_history?: Row[];
}

export interface MerchantDetail {
  merchant: Merchant;
  channel_accounts: ChannelAccount[];
  applications: Application[];
}

export interface ReconciliationRun extends Row {
  run_id: string;
  channel_code: string;
  account?: string;
  bill_date: string;
  status: string;
  rows?: number;
  summary?: unknown;
  error?: string | null;
  started_by?: string;
  started_at?: string | null;
  finished_at?: string | null;
}

export interface Mismatch extends Row {
  mismatch_id: string;
  run_id: string;
  category: string;
  kind: string;
  trade_no: string | null;
  refund_no: string | null;
  state?: string;
  status?: string;
  durapay?: unknown;
  channel?: unknown;
  note?: string | null;
  resolution?: string | null;
  resolved_by?: string | null;
  resolved_at?: string | null;
  created_at?: string;
}

export interface App extends Row {
  app_id: string;
  name?: string;
  app_name?: string;
  status?: string;
  disabled?: boolean;
  created_at?: string | null;
}

export interface OperatorRow extends Row {
  operator_id: string;
  username: string;
  role: Role;
  totp_enabled?: boolean;
  status?: string;
  disabled?: boolean;
  disabled_at?: string | null;
  created_at?: string | null;
  last_login_at?: string | null;
}

export interface AuditEntry extends Row {
  id?: string | number;
  audit_id?: string | number;
  operator?: string | null;
  username?: string | null;
  operator_id?: string | null;
  action: string;
  target_type?: string | null;
  target_id?: string | null;
  before?: unknown;
  after?: unknown;
  outcome?: string;
  error_code?: string | null;
  client_ip?: string | null;
  ip?: string | null;
  created_at?: string;
  at?: string;
}
