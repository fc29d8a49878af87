/**
 * The sandbox's callbacks (回调通知): a payment's or a refund's resource sealed with the APIv3
 * key, the body signed with the platform key, posted to the notify_url and sent again on WeChat's
 * rhythm until it is acknowledged (200 or 204). The order's description (a refund's reason) steers
 * faults: `[sandbox:callback-lost]` sends none, `[sandbox:callback-late]` holds the first attempt
 * back, `[sandbox:callback-duplicate]` sends it twice, `[sandbox:callback-out-of-order]` holds the
 * payment's callback until a refund of the order has been announced. `[sandbox:lost-until-released]`
 * sends none either (see lost-trades.ts). A transfer bill's final state goes the same way
 * (MCHTRANSFER.BILL.FINISHED).
 */
import { randomUUID } from 'node:crypto';
import type { Background } from '../background';
import type { WechatpaySandboxLogger } from './context';
import { describeError } from './http';
import { LOST_UNTIL_RELEASED } from './lost-trades';
import {
  refundNoticeView,
  transactionView,
  type OrderRecord,
  type RefundRecord,
  type WechatpaySandboxStore,
} from './store';
import { encryptResource, rfc3339Cst, wechatpayHeaders, type PlatformSigner } from './wire';

/** WeChat's resending rhythm for an unacknowledged callback, after the first attempt. */
export const CALLBACK_RETRY_DELAYS_MS: readonly number[] = [
  15, 15, 30, 180, 600, 1200, 1800, 1800, 1800, 3600, 10800, 10800, 10800, 21600, 21600,
].map((s) => s * 1000);
/** WeChat gives a notify_url about 5 s to answer. */
const CALLBACK_TIMEOUT_MS = 5_000;
const LATE_CALLBACK_MS = 5_000;
const DUPLICATE_GAP_MS = 1_000;

const REFUND_SUMMARIES = { SUCCESS: '退款成功', ABNORMAL: '退款异常', CLOSED: '退款关闭' } as const;

export interface CallbacksDeps {
  apiV3Key: string;
  /** Who signs a callback now (the platform key's current name). */
  signer(): PlatformSigner;
  store: WechatpaySandboxStore;
  background: Background;
  logger: WechatpaySandboxLogger;
  /** How callbacks are posted. */
  send: typeof fetch;
  /** Multiplies every delay. */
  scale: number;
}

export class Callbacks {
  /** Payment callbacks held until a refund of their order has been announced (out of order). */
  private readonly heldPaymentCallbacks = new Map<OrderRecord, () => void>();

  constructor(private readonly deps: CallbacksDeps) {}

  /**
   * Runs `task` after `ms` unless close() came first, under the out_trade_no of the order it is
   * for (none for a sharing order's); a task's failure is logged, never thrown.
   */
  later(ms: number, task: () => void | Promise<void>, outTradeNo?: string): void {
    this.deps.background.later(ms, task, outTradeNo);
  }

  /** Forgets the payment callbacks still held back (the background is closed by its owner). */
  clear(): void {
    this.heldPaymentCallbacks.clear();
  }

  private notification(eventType: string, summary: string, kind: string, plaintext: unknown): Buffer {
    const resource = encryptResource(this.deps.apiV3Key, JSON.stringify(plaintext), kind, kind);
    const body = {
      id: randomUUID(),
      create_time: rfc3339Cst(Date.now()),
      resource_type: 'encrypt-resource',
      event_type: eventType,
      summary,
      resource,
    };
    return Buffer.from(JSON.stringify(body), 'utf8');
  }

  /** One attempt; unless it is acknowledged (200 or 204), the next on WeChat's rhythm. */
  private async deliver(
    url: string,
    raw: Buffer,
    meta: Record<string, unknown>,
    outTradeNo: string,
    attempt = 0,
  ): Promise<void> {
    const { background, logger } = this.deps;
    if (background.signal.aborted) return;
    let outcome: string;
    try {
      const res = await this.deps.send(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...wechatpayHeaders(this.deps.signer(), raw) },
        body: raw,
        redirect: 'manual',
        signal: AbortSignal.any([background.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status === 200 || res.status === 204) {
        logger.info('wechatpay sandbox callback acknowledged', { ...meta, attempt });
        return;
      }
      outcome = `HTTP ${res.status}`;
    } catch (err) {
      if (background.signal.aborted) return;
      outcome = describeError(err);
    }
    const wait = CALLBACK_RETRY_DELAYS_MS[attempt];
    if (wait === undefined) {
      logger.warn('wechatpay sandbox callback given up', { ...meta, attempt, outcome });
      return;
    }
    logger.warn('wechatpay sandbox callback not acknowledged', { ...meta, attempt, outcome });
    this.later(
      wait * this.deps.scale,
      () => this.deliver(url, raw, meta, outTradeNo, attempt + 1),
      outTradeNo,
    );
  }

  notifyPaid(order: OrderRecord): void {
    const { logger, scale } = this.deps;
    const { description, notify_url: url, out_trade_no: outTradeNo } = order.request;
    const meta = { event_type: 'TRANSACTION.SUCCESS', out_trade_no: outTradeNo, url };
    // A code payment (codepay) takes no notify_url: its till hears of it by answer and query.
    if (url === undefined) return;
    if (description.includes('[sandbox:callback-lost]') || description.includes(LOST_UNTIL_RELEASED)) {
      logger.info('wechatpay sandbox payment callback dropped (fault injection)', meta);
      return;
    }
    const raw = this.notification('TRANSACTION.SUCCESS', '支付成功', 'transaction', transactionView(order));
    if (description.includes('[sandbox:callback-out-of-order]')) {
      logger.info(
        'wechatpay sandbox payment callback held until a refund is announced (fault injection)',
        meta,
      );
      this.heldPaymentCallbacks.set(order, () =>
        this.later(0, () => this.deliver(url, raw, meta, outTradeNo), outTradeNo),
      );
      return;
    }
    const first = description.includes('[sandbox:callback-late]') ? LATE_CALLBACK_MS * scale : 0;
    this.later(first, () => this.deliver(url, raw, meta, outTradeNo), outTradeNo);
    if (description.includes('[sandbox:callback-duplicate]')) {
      this.later(
        first + DUPLICATE_GAP_MS * scale,
        () => this.deliver(url, raw, meta, outTradeNo),
        outTradeNo,
      );
    }
  }

  /**
   * A transfer bill's final state (SUCCESS, FAIL, CANCELLED) to its notify_url, when it has one,
   * sealed as WeChat Pay seals it (original_type and associated_data `mch_payment`).
   */
  notifyTransfer(url: string | undefined, plaintext: Record<string, unknown>, outBillNo: string): void {
    const meta = {
      event_type: 'MCHTRANSFER.BILL.FINISHED',
      out_bill_no: outBillNo,
      state: plaintext.state,
      url,
    };
    if (url === undefined) {
      this.deps.logger.info('wechatpay sandbox transfer has no notify_url: no callback', meta);
      return;
    }
    const raw = this.notification(
      'MCHTRANSFER.BILL.FINISHED',
      '商家转账单据终态通知',
      'mch_payment',
      plaintext,
    );
    this.later(0, () => this.deliver(url, raw, meta, outBillNo), outBillNo);
  }

  /** Told of every refund that reached its payer (the complaints of its order take note). */
  onRefunded?: (refund: RefundRecord) => void;

  /**
   * A complaint's change (COMPLAINT.CREATE, COMPLAINT.STATE_CHANGE) to the service provider's
   * complaint notification URL: its complaint_id and action_type, sealed as WeChat Pay seals it.
   */
  notifyComplaint(url: string, eventType: string, summary: string, plaintext: Record<string, unknown>): void {
    const complaintId = String(plaintext.complaint_id);
    const meta = {
      event_type: eventType,
      complaint_id: complaintId,
      action_type: plaintext.action_type,
      url,
    };
    const raw = this.notification(eventType, summary, 'complaint', plaintext);
    this.later(0, () => this.deliver(url, raw, meta, complaintId), complaintId);
  }

  /** Settles a due refund once; only the call that settled it posts its callback. */
  settle(refund: RefundRecord): void {
    const { logger, scale } = this.deps;
    if (!this.deps.store.settleRefund(refund, Date.now())) return;
    if (refund.status === 'SUCCESS') this.onRefunded?.(refund);
    const outTradeNo = refund.order.request.out_trade_no;
    const status = refund.status as keyof typeof REFUND_SUMMARIES;
    const meta = { event_type: `REFUND.${status}`, out_refund_no: refund.request.out_refund_no };
    logger.info('wechatpay sandbox refund settled', meta);
    const url = refund.request.notify_url;
    if (url !== undefined && (refund.request.reason ?? '').includes('[sandbox:callback-lost]')) {
      logger.info('wechatpay sandbox refund callback dropped (fault injection)', meta);
    } else if (url !== undefined) {
      const raw = this.notification(
        `REFUND.${status}`,
        REFUND_SUMMARIES[status],
        'refund',
        refundNoticeView(refund),
      );
      this.later(0, () => this.deliver(url, raw, { ...meta, url }, outTradeNo), outTradeNo);
    }
    // The payment's own callback, held back, now comes after its refund's.
    const held = this.heldPaymentCallbacks.get(refund.order);
    if (held) {
      this.heldPaymentCallbacks.delete(refund.order);
      this.later(DUPLICATE_GAP_MS * scale, held, outTradeNo);
    }
  }
}
