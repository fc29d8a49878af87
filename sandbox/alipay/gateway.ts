/**
 * The gateway's model in motion: the trade store with what follows each transition (a trade's
 * expiry timer, the notification of a payment, a closure or a refund, the slow refund finishing
 * later), shared by the methods, the cashier and the app's submit. Every read of a trade first
 * brings it up to date, so a query never sees an expired trade still waiting for its buyer.
 */
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { AppAuthBook, type AppAuthLifetimes } from './app-auth';
import type { AlipaySandboxKeys } from './keys';
import { Notifier, signedForm } from './notify';
import { expiryOf, readOrder } from './order';
import type { Background } from '../background';
import { Scheduler } from './scheduler';
import { TradeStore, type CancelAction, type PayMethod, type RefundRecord, type TradeRecord } from './store';
import type { App } from './verify';
import { notifyFields, refundAnswerView, yuan } from './views';
import { API_VERSION, SIGN_TYPE, beijingTime, businessFailed, type Params } from './wire';

export interface GatewayLogger {
  info(message: string, meta?: object): void;
  warn(message: string, meta?: object): void;
}

/** One verified request to gateway.do, as a method sees it. */
export interface Call {
  method: string;
  params: Params;
  files: Map<string, File>;
  now: number;
}

/**
 * Thrown by a method that did its work but whose answer the network is to lose (fault injection):
 * the router drops the connection instead of answering.
 */
export class DroppedAnswer extends Error {
  override name = 'DroppedAnswer';
}

export type Handler = (call: Call) => Record<string, unknown> | Promise<Record<string, unknown>>;

export interface GatewayOptions {
  keys: AlipaySandboxKeys;
  /** Where the router is reached, without a trailing slash. */
  base: string;
  scale: number;
  refundDelayMs: number;
  logger: GatewayLogger;
  background?: Background;
  /** The tokens' expires_in and re_expires_in, and an app_auth_code's life before scale. */
  appAuth?: Partial<AppAuthLifetimes> & { codeTtlMs?: number };
}

export class AlipayGateway {
  readonly trades = new TradeStore();
  /** The merchants' authorisations of apps: whose trades a call with an app_auth_token reaches. */
  readonly appAuth: AppAuthBook;
  readonly scheduler: Background;
  readonly notifier: Notifier;
  readonly app: App;
  private readonly alipayPrivateKey;

  constructor(readonly options: GatewayOptions) {
    this.scheduler = options.background ?? new Scheduler(options.logger);
    this.alipayPrivateKey = createPrivateKey(options.keys.alipayPrivateKeyPem);
    this.app = { appId: options.keys.appId, publicKey: createPublicKey(options.keys.appPublicKeyPem) };
    this.appAuth = new AppAuthBook({ ...options.appAuth, appId: options.keys.appId, scale: options.scale });
    this.notifier = new Notifier({
      privateKey: this.alipayPrivateKey,
      scheduler: this.scheduler,
      scale: options.scale,
      logger: options.logger,
    });
  }

  get privateKey() {
    return this.alipayPrivateKey;
  }

  cashierUrl(trade: TradeRecord): string {
    return `${this.options.base}/cashier/${trade.tradeNo}`;
  }

  /**
   * The trade a paying method asks for, validated, made on the first call and the same one on a
   * repeat; its expiry is armed when it is made.
   */
  openTrade(method: PayMethod, call: Call, biz: Record<string, unknown>) {
    const { order, totalFen } = readOrder(biz, call.params);
    const expiresAt = expiryOf(order, call.now, this.options.scale);
    const earlier = this.trades.peek(order.out_trade_no);
    if (earlier) this.touch(earlier, call.now);
    const { trade, created } = this.trades.createTrade(
      method,
      order,
      {
        ...(call.params.notify_url ? { notifyUrl: call.params.notify_url } : {}),
        ...(call.params.return_url ? { returnUrl: call.params.return_url } : {}),
        ...(call.params.app_auth_token
          ? { appAuthToken: call.params.app_auth_token, merchant: this.merchantOf(call)! }
          : {}),
      },
      totalFen,
      expiresAt,
      call.now,
    );
    if (created) {
      this.options.logger.info('alipay sandbox trade opened', { method, out_trade_no: order.out_trade_no });
      // Under no trade: an expiry is time passing, not work the trade waits for.
      this.scheduler.later(expiresAt - call.now, () => void this.touch(trade, Date.now()));
    }
    return { trade, created };
  }

  /** The trade brought up to date: an expired one closes, with a notification if it existed. */
  touch(trade: TradeRecord, now: number): TradeRecord {
    if (this.trades.expireIfDue(trade, now)) {
      this.options.logger.info('alipay sandbox trade expired', { out_trade_no: trade.order.out_trade_no });
      if (trade.exists) this.notify(trade);
    }
    for (const refund of trade.refunds) {
      if (refund.status === 'PROCESSING' && now >= refund.requestedAt + this.options.refundDelayMs) {
        this.completeRefund(trade, refund, now);
      }
    }
    return trade;
  }

  /**
   * The trade a method names (trade_no or out_trade_no) among the calling merchant's, up to date,
   * or ACQ.TRADE_NOT_EXIST.
   */
  find(call: Call, ref: { out_trade_no?: string; trade_no?: string }): TradeRecord {
    return this.touch(this.trades.find(ref, this.merchantOf(call)), call.now);
  }

  /**
   * The merchant a call acts for (app-auth.ts): its authorisation for a token this gateway made
   * (so a refreshed token finds the trades of the one before), else the token itself; undefined
   * for the app's own trades. A token granted to the app but expired or replaced is refused.
   */
  merchantOf(call: Call): string | undefined {
    const token = call.params.app_auth_token;
    return token ? this.appAuth.merchantOf(token, call.params.app_id ?? '', call.now) : undefined;
  }

  notify(trade: TradeRecord, refund?: RefundRecord): void {
    const fields = notifyFields(
      trade,
      {
        appId: this.options.keys.appId,
        sellerId: this.options.keys.sellerId,
        notifyId: randomBytes(16).toString('hex'),
      },
      Date.now(),
      refund,
    );
    this.notifier.notify(trade.order.out_trade_no, trade.context.notifyUrl, trade.order.subject, fields);
  }

  /** The buyer opened the cashier: a precreated trade waiting for its buyer exists from now on. */
  scan(trade: TradeRecord, now: number): void {
    if (trade.exists || trade.status !== 'WAIT_BUYER_PAY') return;
    this.trades.scan(trade, now);
    this.options.logger.info('alipay sandbox trade scanned', { out_trade_no: trade.order.out_trade_no });
  }

  /**
   * Where a paid page or wap payment sends the buyer back (同步返回): its return_url with the
   * trade's fields signed like a notification, which is only a hint (the notification decides).
   */
  returnLink(trade: TradeRecord, now: number): string | undefined {
    const url = trade.context.returnUrl;
    if (url === undefined || trade.paidAt === undefined) return undefined;
    const fields = {
      app_id: this.options.keys.appId,
      auth_app_id: this.options.keys.appId,
      charset: 'utf-8',
      method: `${trade.method}.return`,
      out_trade_no: trade.order.out_trade_no,
      seller_id: this.options.keys.sellerId,
      sign_type: SIGN_TYPE,
      timestamp: beijingTime(now),
      total_amount: yuan(trade.totalFen),
      trade_no: trade.tradeNo,
      version: API_VERSION,
    };
    return `${url}${url.includes('?') ? '&' : '?'}${signedForm(fields, this.alipayPrivateKey)}`;
  }

  /** The buyer paid at the cashier; true when this made the payment (and sent its notification). */
  pay(trade: TradeRecord, now: number): boolean {
    if (!this.trades.pay(trade, now)) return false;
    this.options.logger.info('alipay sandbox trade paid', { out_trade_no: trade.order.out_trade_no });
    this.notify(trade);
    return true;
  }

  closeTrade(trade: TradeRecord, now: number): void {
    this.trades.close(trade, now);
    this.options.logger.info('alipay sandbox trade closed', { out_trade_no: trade.order.out_trade_no });
    this.notify(trade);
  }

  /**
   * alipay.trade.cancel: the trade closed, or given back when paid. 当面付 notifies its
   * payments only (TRADE_SUCCESS), so a cancel sends nothing.
   */
  cancelTrade(trade: TradeRecord, now: number): CancelAction {
    const repeat = trade.cancelled !== undefined;
    const action = this.trades.cancel(trade, now);
    if (!repeat) {
      this.options.logger.info('alipay sandbox trade cancelled', {
        out_trade_no: trade.order.out_trade_no,
        action,
      });
    }
    return action;
  }

  /**
   * alipay.trade.refund: the same out_request_no answers the same refund. The reason steers
   * faults: `[sandbox:refuse]` refuses it, `[sandbox:slow]` keeps it processing for refundDelayMs.
   */
  refund(
    trade: TradeRecord,
    request: { outRequestNo: string; amountFen: number; reason?: string },
    now: number,
  ) {
    const reason = request.reason ?? '';
    const repeat = trade.refunds.some((r) => r.outRequestNo === request.outRequestNo);
    if (!repeat && reason.includes('[sandbox:refuse]')) {
      throw businessFailed(
        'ACQ.SELLER_BALANCE_NOT_ENOUGH',
        '卖家余额不足 (fault injection: [sandbox:refuse])',
      );
    }
    const { refund, created } = this.trades.refund(trade, request, now);
    let fundChange = false;
    if (created) {
      this.options.logger.info('alipay sandbox refund accepted', { out_request_no: request.outRequestNo });
      if (reason.includes('[sandbox:slow]')) {
        this.scheduler.later(
          this.options.refundDelayMs,
          () => {
            this.completeRefund(trade, refund, Date.now());
          },
          trade.order.out_trade_no,
        );
      } else {
        fundChange = this.completeRefund(trade, refund, now);
      }
    }
    return refundAnswerView(trade, refund, fundChange);
  }

  private completeRefund(trade: TradeRecord, refund: RefundRecord, now: number): boolean {
    if (!this.trades.completeRefund(trade, refund, now)) return false;
    this.options.logger.info('alipay sandbox refund done', { out_request_no: refund.outRequestNo });
    this.notify(trade, refund);
    return true;
  }

  /** Stops every timer and aborts notifications in flight. */
  stop(): void {
    this.scheduler.close();
  }
}
