/**
 * What the console's API answers: the schemas of its document (`/console/openapi.json`),
 * generated into ./generated/openapi.ts by the console's build (src/cli/dev/console-api.ts), so
 * that a field the server does not send does not compile here.
 */
import type { components } from './generated/openapi';

type Schemas = components['schemas'];

export type Role = Schemas['OperatorRole'];
export type Operator = Schemas['Operator'];
export type Session = Schemas['Session'];

/** A keyset page of the console's lists. */
export interface Page<T> {
  list: T[];
  next: string | null;
}

/** A row of any list, as the generic table shows it. */
export type Row = Record<string, unknown>;

export type Order = Schemas['ConsoleOrder'];
export type OrderDetail = Schemas['OrderDetail'];
export type ShareStep = Schemas['ShareStep'];
export type TimelineEntry = Schemas['TimelineEntry'];
export type Refund = Schemas['ConsoleRefund'];
export type RefundResult = Schemas['RefundResult'];
export type Transfer = Schemas['ConsoleTransfer'];
export type PaymentLink = Schemas['ConsolePaymentLink'];
export type ComplaintItem = Schemas['ConsoleComplaintItem'];
export type Complaint = Schemas['ConsoleComplaint'];
export type MerchantCode = Schemas['ConsoleMerchantCode'];
export type Notification = Schemas['ConsoleNotification'];
export type NotificationWithAttempts = Schemas['ConsoleNotificationWithAttempts'];
export type NotificationDetail = Schemas['NotificationDetail'];
export type NotificationAttempt = NotificationDetail['attempts'][number];
export type Merchant = Schemas['ConsoleMerchantRecord'];
export type MerchantDetail = Schemas['MerchantDetail'];
export type ChannelAccount = Schemas['ChannelAccount'];
export type Application = Schemas['ConsoleApplication'];
export type ReconciliationRun = Schemas['ReconciliationRun'];
export type Mismatch = Schemas['ConsoleMismatch'];
export type App = Schemas['App'];
export type OperatorRow = Schemas['Operator'];
export type AuditEntry = Schemas['AuditEntry'];
export type Overview = Schemas['Overview'];
