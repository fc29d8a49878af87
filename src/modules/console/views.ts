import { isoOrNull } from '../../platform/dates';
import { applicationView, type ApplicationRow } from '../applications';
import type { AppRecord } from '../apps';
import { merchantView, type MerchantRecord, type MerchantWithPersonalData } from '../merchants';
import { notificationView, type Notification } from '../notifications';
import { orderView, type Order } from '../orders';
import { mismatchView, type MismatchRow } from '../reconciliation';
import { refundView, type Refund } from '../refunds';
import { transferView, type Transfer } from '../transfers';

// What the console shows of each thing: the API's view of it (so that an operator and an app read
// the same fields), and what only an operator sees across apps: whose it is (`app_id`), and the
// flags and reasons an app's answer leaves out. Never a secret.

export function consoleOrderView(o: Order) {
  return {
    ...orderView(o),
    app_id: o.appId,
    needs_refund_review: o.needsRefundReview,
    notify_url: o.notifyUrl,
    currency: o.currency,
  };
}

export function consoleRefundView(r: Refund) {
  return {
    ...refundView(r),
    app_id: r.appId,
    fail_reason: r.failReason,
    updated_at: isoOrNull(r.updatedAt),
  };
}

export function consoleTransferView(t: Transfer) {
  return { ...transferView(t), app_id: t.appId, updated_at: isoOrNull(t.updatedAt) };
}

/** A notification without its attempts (a list), and its app. */
export function consoleNotificationView(n: Notification) {
  const { attempts: _attempts, ...view } = notificationView(n);
  return { ...view, app_id: n.appId };
}

/** A notification's attempts, oldest first. */
export function attemptsView(n: Notification) {
  return notificationView(n).attempts;
}

/** A merchant in a list: its record, without its personal data. */
export function merchantRecordView(m: MerchantRecord) {
  return {
    app_id: m.appId,
    merchant_id: m.merchantId,
    merchant_name: m.merchantName,
    license_no: m.licenseNo,
    status: m.status,
    channel_code: m.channelCode,
    sub_merchant_no: m.subMerchantNo,
    profit_sharing: m.profitSharing,
    created_at: isoOrNull(m.createdAt),
    updated_at: isoOrNull(m.updatedAt),
  };
}

/** A merchant on its page: as the API shows it to its app (bank account masked), and whose. */
export function merchantDetailView(m: MerchantWithPersonalData) {
  const { channel_accounts: _accounts, ...view } = merchantView(m, []);
  return { ...view, app_id: m.appId };
}

/** One change of an application, as its `merchant.application.updated` notification told it. */
export interface ApplicationChange {
  at: string | null;
  status: string;
  reject_reason?: string | null;
  /** The notification that told it, and how its delivery went; absent for a change told to no one. */
  notification_id?: string;
  delivery?: string;
}

/**
 * An application's history: each change as its notification carried it (one per change, when
 * the application has a notify_url), or else what its row keeps, its submission and where it is.
 */
export function applicationHistory(a: ApplicationRow, notifications: Notification[]): ApplicationChange[] {
  const told = notifications.flatMap((n): ApplicationChange[] => {
    try {
      const body = JSON.parse(n.body) as {
        timestamp?: string;
        data?: { status?: string; reject_reason?: string };
      };
      if (!body.data?.status) return [];
      return [
        {
          at: body.timestamp ?? isoOrNull(n.createdAt),
          status: body.data.status,
          reject_reason: body.data.reject_reason ?? null,
          notification_id: n.notificationId,
          delivery: n.status,
        },
      ];
    } catch {
      return [];
    }
  });
  if (told.length > 0) return told;
  const submitted: ApplicationChange = { at: isoOrNull(a.submitted_at), status: 'submitted' };
  if (a.status === 'submitted') return [submitted];
  return [
    submitted,
    { at: isoOrNull(a.finished_at ?? a.updated_at), status: a.status, reject_reason: a.reject_reason },
  ];
}

export function consoleApplicationView(a: ApplicationRow, notifications: Notification[]) {
  return { ...applicationView(a), audit_history: applicationHistory(a, notifications) };
}

export function consoleMismatchView(m: MismatchRow) {
  return { ...mismatchView(m), app_id: m.app_id };
}

/** An app as an operator sees it: never its secrets (they are not even read). */
export function appView(a: AppRecord) {
  return {
    app_id: a.appId,
    name: a.name,
    scopes: a.scopes,
    status: a.status,
    created_at: isoOrNull(a.createdAt),
    updated_at: isoOrNull(a.updatedAt),
  };
}
