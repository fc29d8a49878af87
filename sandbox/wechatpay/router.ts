// Longer than 400 lines: the sandbox's composition. Most of it is the WechatpaySandbox interface
// a test steers, each control documented; the routes and the state live in their own files.
/**
 * An offline WeChat Pay API v3 sandbox for the service-provider ("partner") payment APIs, as an
 * Express router: create (JSAPI, APP, H5, Native), query, close, refund, refund query and
 * abnormal refund (payment-routes.ts), profit sharing (add a receiver, share, query a sharing
 * order, unfreeze, return and query a return: sharing-routes.ts), onboarding (media upload,
 * applyment submit and query: applyment.ts), a sub-merchant's settlement account read, which
 * tells this service provider's sub-merchants from another's (sub-merchants.ts), a sub-merchant's
 * daily trade statement and its download (statement-routes.ts), 商家转账 bills (create, query,
 * cancel, in the partner and the direct form) with the payee's confirmation page
 * (transfer-routes.ts), each request's
 * WECHATPAY2-SHA256-RSA2048 signature checked here and every answer signed with the platform key
 * (platform-key.ts), plus a buyer's checkout page (checkout.ts) and signed, encrypted callbacks
 * retried on WeChat's rhythm (callbacks.ts). Any v3 client with its response verification on can talk to it; it is written
 * on node:crypto alone (./wire.ts) so that such a test is one of interoperability. The request
 * schemas are in schemas.ts, the state and its transitions in store.ts, sharing.ts,
 * transfers.ts and applyment.ts.
 */
import { createPublicKey } from 'node:crypto';
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import { readRawBody } from '../../src/platform/http/raw-body';
import { Background } from '../background';
import { WechatpayApplymentStore, applymentRoutes, readMediaForm, type ApplymentRecord } from './applyment';
import { Callbacks } from './callbacks';
import { certificatesView, type PlatformCertificate } from './certificates';
import { checkoutRoutes } from './checkout';
import { oauthRoutes } from './oauth';
import type { SandboxContext, WechatpaySandboxLogger } from './context';
import { describeError } from './http';
import { LostTrades } from './lost-trades';
import type { WechatpaySandboxKeys } from './keys';
import { DEFAULT_BUYER_CONFIRM_MS, DEFAULT_CODEPAY_LATE_MS, codepayRoutes } from './codepay';
import { paymentRoutes } from './payment-routes';
import { PlatformKey } from './platform-key';
import {
  WechatpaySharingStore,
  type WechatpaySandboxReceiver,
  type WechatpaySandboxReturn,
  type WechatpaySandboxSharing,
  type WechatpaySandboxUnfreeze,
} from './sharing';
import { sharingRoutes } from './sharing-routes';
import { StatementControls, statementRoutes } from './statement-routes';
import {
  TRANSFER_CONFIRM_WINDOW_MS,
  TransferDesk,
  transferConfirmRoutes,
  transferRoutes,
} from './transfer-routes';
import { TransferBills } from './transfers';
import { DEFAULT_FOREIGN_SUB_MCHID_PREFIXES, subMerchantRoutes } from './sub-merchants';
import { WechatpaySandboxStore, type AbnormalRefundApplication, type OrderRecord } from './store';
import { ComplaintDesk, type ComplaintRecord, type OpenComplaint } from './complaints';
import { complaintRoutes } from './complaint-routes';
import { WechatpayError, requestId, verifyRequest, wechatpayHeaders } from './wire';
import { PapayDesk, papayRoutes, type PapaySteer, type WechatpaySandboxPapayContract } from './papay';
import { apiV2KeyOf, WECHATPAY_SANDBOX_PAPAY_PLAN_ID } from './keys';
import { scaledTimeOf, type ScaledClock } from '../../src/platform/clock';

export type { WechatpaySandboxLogger } from './context';

export interface WechatpaySandboxOptions {
  keys: WechatpaySandboxKeys;
  /** Where the router is mounted as browsers reach it, e.g. http://127.0.0.1:8080/wechatpay. */
  publicBaseUrl: string;
  /**
   * Which name of the platform key answers and callbacks carry in Wechatpay-Serial: the WeChat Pay
   * public key's PUB_KEY_ID (`public_key`, the default, as for new merchants) or the serial of the
   * newest platform certificate (`certificate`, as for merchants on the older mode).
   */
  platformIdentity?: 'public_key' | 'certificate';
  /** Multiplies every delay (refunds, late and retried callbacks); 1 unless a test speeds it up. */
  timeScale?: number;
  /** How long a code payment's buyer who confirms later takes (../wallet-buyers.ts), before timeScale; 1 s by default. */
  buyerConfirmMs?: number;
  /** How long a refund or a profit-sharing order stays PROCESSING, before timeScale; 1000 by default. */
  refundDelayMs?: number;
  /**
   * How long a return whose description holds `[sandbox:return-processing]` stays PROCESSING,
   * before timeScale; refundDelayMs by default.
   */
  returnDelayMs?: number;
  /**
   * Sub_mchids starting with one of these stand for another service provider's sub-merchants:
   * the settlement account read answers them 403 NO_AUTH, unless an applyment here issued them.
   * `['19999']` by default, so that a test can name a foreign sub_mchid (1999900001).
   */
  foreignSubMchidPrefixes?: readonly string[];
  /**
   * How long a transfer's payee has to confirm before the bill is closed FAIL (OVERDUE_CLOSE),
   * before timeScale; 24 h, as at WeChat Pay, by default.
   */
  transferConfirmWindowMs?: number;
  logger?: WechatpaySandboxLogger;
  /** How callbacks are posted; the global fetch unless set. */
  callbackFetch?: typeof fetch;
  /**
   * Where callbacks, their retries and settlements due after an answer run (../background.ts),
   * each under its order's out_trade_no; a test passes one to read what was scheduled. One of its
   * own by default.
   */
  background?: Background;
  /** The calendar of 委托代扣's rules (papay.ts): durapay's contract clock on a scaled stack; real time by default. */
  contractClock?: ScaledClock;
}

/** What a test reads of a code payment: its state, whether WeChat Pay keeps the buyer's money, and the asks made of it. */
export interface WechatpaySandboxCodepay {
  state: string;
  kept: boolean;
  requests: number;
  reverses: number;
  /** A reverse gave the buyer's money back. */
  givenBack: boolean;
}

export interface WechatpaySandbox {
  router: Router;
  keys: WechatpaySandboxKeys;
  /**
   * A transaction's profit sharing, without HTTP and as a query would see it now (a due order
   * settled): its sharing orders and whether its rest was unfrozen. Undefined until a sharing or
   * unfreeze order was accepted for it.
   */
  sharing(transactionId: string): WechatpaySandboxSharing | undefined;
  /** The receivers a sub-merchant added, each `name` decrypted. */
  receivers(subMchid: string): WechatpaySandboxReceiver[];
  /** A transaction's return orders (分账回退), oldest first, as a query would see them now. */
  returns(transactionId: string): WechatpaySandboxReturn[];
  /** A transaction's unfreeze orders (解冻剩余资金), oldest first. */
  unfreezes(transactionId: string): WechatpaySandboxUnfreeze[];
  /** How an ABNORMAL refund was asked to be paid instead, its sealed fields opened; undefined if never. */
  abnormalRefundApplication(subMchid: string, outRefundNo: string): AbnormalRefundApplication | undefined;
  /** An applyment by business_code as submitted, its sealed fields opened; a look does not move it. */
  applyment(businessCode: string): ApplymentRecord | undefined;
  /** A code payment as WeChat Pay holds it (undefined for an out_trade_no it never saw as one). */
  codepay(outTradeNo: string): WechatpaySandboxCodepay | undefined;
  /** Every payment order WeChat Pay holds, as a query would see it now: the ledger a test counts. */
  transactions(): {
    out_trade_no: string;
    description: string;
    trade_state: string;
    total: number;
    sp_openid?: string;
  }[];
  /** The platform certificates `GET /v3/certificates` lists, oldest first. */
  platformCertificates(): readonly PlatformCertificate[];
  /**
   * Issues a new platform certificate on a new key pair, as WeChat Pay does before the old one
   * expires; in `certificate` identity, answers and callbacks are signed with it from now on.
   */
  rotatePlatformCertificate(): PlatformCertificate;
  /**
   * Resolves once nothing is due or running for the order (for any order, without one): its
   * callbacks sent and acknowledged or given up, its refunds settled. A payment callback held
   * until a refund (callback-out-of-order) waits for that refund, not for time.
   */
  idle(outTradeNo?: string): Promise<void>;
  /**
   * The next `requests` asks for the statement of `day` (YYYY-MM-DD, any sub-merchant) answer
   * STATEMENT_CREATING, as before WeChat Pay has made it.
   */
  holdStatement(day: string, requests: number): void;
  /** The sub-merchant's statements come in the older 24-column layout (`false`: today's again). */
  useLegacyStatement(subMchid: string, legacy?: boolean): void;
  /** The next `count` statement links handed out (1 by default) have expired when they are used. */
  expireStatementLinks(count?: number): void;
  /** How many times the statement of `day` was asked for, held back or not. */
  statementRequests(day: string): number;
  /**
   * A paid order whose description holds `[sandbox:lost-until-released]` (no callback, every query
   * and close cut off) is answered again from now on; its callback stays lost.
   */
  release(outTradeNo: string): void;
  /**
   * The payee confirms the transfer `outBillNo` (the newest bill of that number): TRANSFERING,
   * then SUCCESS (FAIL with `[transfer:fail]` in the remark) after the refund delay, with its
   * callback. Throws unless the bill waits for its payee (WAIT_USER_CONFIRM).
   */
  confirmTransfer(outBillNo: string): void;
  /**
   * The payee never confirms: the bill is closed now as WeChat Pay closes it after 24 h, FAIL
   * with fail_reason OVERDUE_CLOSE, with its callback. Throws unless the bill is WAIT_USER_CONFIRM.
   */
  expireTransfer(outBillNo: string): void;
  /** How many transfer creates arrived for `outBillNo`, refused and repeated ones included. */
  transferCreates(outBillNo: string): number;
  /** The confirmation page of a bill's package_info (GET shows it; POST {"action"} acts). */
  transferConfirmUrl(packageInfo: string): string;
  /**
   * The payer of the paid order `outTradeNo` complains about it (消费者投诉2.0): the complaint is
   * made PENDING and COMPLAINT.CREATE is pushed to the complaint notification URL, unless
   * `lostNotification`. Throws unless the order is paid.
   */
  openComplaint(outTradeNo: string, complaint?: OpenComplaint): ComplaintRecord;
  /** A complaint as WeChat Pay holds it (its calls counted), or undefined. */
  complaint(complaintId: string): ComplaintRecord | undefined;
  /** The refunds WeChat Pay holds of the order `outTradeNo`, as it counts them (a test's ledger). */
  refundsOf(outTradeNo: string): { outRefundNo: string; amount: number; status: string }[];
  /** The payer writes again on the complaint (USER_RESPONSE). */
  payerResponds(complaintId: string, text: string): void;
  /** The payer complains again (CONTINUE_COMPLAINT): the complaint is PENDING again. */
  payerContinues(complaintId: string, text: string): void;
  /** The complaint notification URL registered by the service provider, if any. */
  complaintNotifyUrl(): string | undefined;
  /** A 委托代扣 contract by contract_code (durapay's contract number), as WeChat Pay holds it, or undefined. */
  papayContract(contractCode: string): WechatpaySandboxPapayContract | undefined;
  /** The contract's next deductions go so, one steer each: fail for want of balance, or lose their answer. */
  steerDeductions(contractCode: string, ...steers: PapaySteer[]): void;
  /** The contract's buyer unsigns in WeChat as its next pre-deduction notice arrives. */
  cancelAfterNotice(contractCode: string): void;
  /** The contract's buyer unsigns in WeChat now (contract_termination_mode 2), with its notification. */
  buyerUnsigns(contractCode: string): void;
  /** The contract's notifications (signed, unsigned) are never sent: only a query finds its changes. */
  loseContractNotifications(contractCode: string): void;
  /** Cancels pending refunds, sharing orders and callbacks, and aborts callbacks in flight. */
  close(): void;
}

const MAX_BODY_BYTES = 1024 * 1024;

const silentLogger: WechatpaySandboxLogger = { info() {}, warn() {}, error() {} };

export function createWechatpaySandbox(options: WechatpaySandboxOptions): WechatpaySandbox {
  const { keys } = options;
  const logger = options.logger ?? silentLogger;
  const scale = options.timeScale ?? 1;
  const refundDelayMs = (options.refundDelayMs ?? 1000) * scale;
  const base = options.publicBaseUrl.replace(/\/+$/, '');
  const platform = new PlatformKey(keys, options.platformIdentity);
  const merchant = {
    mchid: keys.spMchid,
    serial: keys.merchantSerial,
    publicKey: createPublicKey(keys.merchantPublicKeyPem),
  };
  const store = new WechatpaySandboxStore();
  const sharings = new WechatpaySharingStore(
    refundDelayMs,
    options.returnDelayMs === undefined ? refundDelayMs : options.returnDelayMs * scale,
  );
  const applyments = new WechatpayApplymentStore();
  const background =
    options.background ??
    new Background((err) => logger.error('wechatpay sandbox task failed', { error: describeError(err) }));
  const callbacks = new Callbacks({
    apiV3Key: keys.apiV3Key,
    signer: () => platform.signer(),
    store,
    background,
    logger,
    send: options.callbackFetch ?? fetch,
    scale,
  });

  /** Every answer is signed over the exact bytes sent, errors and 204 included. */
  function answer(res: Response, status: number, body?: unknown): void {
    const raw = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body), 'utf8');
    res.status(status).set(wechatpayHeaders(platform.signer(), raw)).set('Request-ID', requestId());
    if (body === undefined) {
      res.end();
      return;
    }
    res.set('Content-Type', 'application/json').send(raw);
  }

  const unseal = (req: Request, ciphertext: string, field: string) => platform.unseal(req, ciphertext, field);
  const lost = new LostTrades();
  const statements = new StatementControls();
  const ctx: SandboxContext = {
    keys,
    store,
    sharings,
    callbacks,
    logger,
    lost,
    refundDelayMs,
    checkoutUrl: (order: OrderRecord) => `${base}/checkout/${order.token}`,
    answer,
    unseal,
  };

  const transfers = new TransferDesk(
    ctx,
    new TransferBills(),
    (options.transferConfirmWindowMs ?? TRANSFER_CONFIRM_WINDOW_MS) * scale,
    base,
  );

  const complaints = new ComplaintDesk({
    ctx,
    base,
    merchantKey: merchant.publicKey,
    notify: (url, eventType, summary, plaintext) =>
      callbacks.notifyComplaint(url, eventType, summary, plaintext),
  });
  callbacks.onRefunded = (refund) => {
    const refunded = store
      .refundsOf(refund.spMchid, refund.order.request.sub_mchid)
      .filter((r) => r.order === refund.order && r.status === 'SUCCESS')
      .reduce((sum, r) => sum + r.request.amount.refund, 0);
    complaints.refunded(refund.order, refunded >= refund.order.request.amount.total);
  };

  const router = express.Router({ caseSensitive: true });
  // Its own bodies, as sent: the signature covers the exact bytes (a host that kept them is fine).
  router.use(readRawBody({ limit: MAX_BODY_BYTES }));
  checkoutRoutes(router, ctx, complaints);
  oauthRoutes(router, ctx, { base, merchantKey: merchant.publicKey });
  transferConfirmRoutes(router, ctx, transfers);

  // Everything under /v3 is the merchant's API: signed by the merchant's key, or refused.
  router.use('/v3', async (req, res, next) => {
    // A media upload is signed over its `meta` part, not its multipart bytes.
    let signed = req.rawBody ?? Buffer.alloc(0);
    if (
      req.method === 'POST' &&
      (req.path === '/merchant/media/upload' || req.path === '/merchant-service/images/upload')
    ) {
      const form = await readMediaForm(req);
      res.locals.mediaForm = form;
      signed = Buffer.from(form.meta, 'utf8');
    }
    const check = verifyRequest(
      {
        method: req.method,
        // The full path the client signed, wherever this router is mounted.
        pathWithQuery: req.originalUrl,
        body: signed,
        authorization: req.get('Authorization'),
      },
      merchant,
    );
    if (check.ok) {
      res.locals.mchid = check.mchid;
      next();
      return;
    }
    const consumed = req.rawBody === undefined && req.body !== undefined;
    const reason = consumed
      ? `${check.reason} (the body was parsed before the sandbox saw its bytes: mount it before any body parser)`
      : check.reason;
    logger.warn('wechatpay sandbox request refused', { path: req.originalUrl, reason });
    answer(res, 401, { code: 'SIGN_ERROR', message: `签名错误: ${reason}` });
  });

  // Before paymentRoutes, whose /v3/pay/partner/transactions/:kind knows only the prepayments.
  codepayRoutes(router, ctx, {
    buyerConfirmMs: (options.buyerConfirmMs ?? DEFAULT_BUYER_CONFIRM_MS) * scale,
    lateMs: DEFAULT_CODEPAY_LATE_MS * scale,
  });
  paymentRoutes(router, ctx);
  sharingRoutes(router, ctx);
  statementRoutes(router, ctx, statements, base);
  transferRoutes(router, ctx, transfers);
  complaintRoutes(router, ctx, complaints);
  const clock = options.contractClock;
  const papayOptions = {
    apiV2Key: apiV2KeyOf(keys),
    planId: WECHATPAY_SANDBOX_PAPAY_PLAN_ID,
    base,
    toClock: (realMs: number) => (clock ? scaledTimeOf(clock, realMs) : realMs),
    // A deduction settles a moment after it is accepted.
    settleMs: 200 * scale,
    scale,
    send: options.callbackFetch ?? fetch,
  };
  const papay = new PapayDesk(ctx, papayOptions);
  papayRoutes(router, ctx, papay, papayOptions);

  router.get('/v3/certificates', (_req, res) => {
    answer(res, 200, certificatesView(platform.listCertificates(), keys.apiV3Key));
  });

  applymentRoutes(router, {
    store: applyments,
    base,
    answer,
    unseal,
    log: (message, meta) => logger.info(message, meta),
  });
  subMerchantRoutes(router, {
    applyments,
    foreignSubMchidPrefixes: options.foreignSubMchidPrefixes ?? DEFAULT_FOREIGN_SUB_MCHID_PREFIXES,
    answer,
  });

  router.use((req: Request, res: Response) => {
    answer(res, 404, { code: 'NOT_FOUND', message: `no such API: ${req.method} ${req.path}` });
  });

  const errors: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    if (err instanceof WechatpayError) {
      answer(res, err.httpStatus, err.body());
      return;
    }
    // body-parser's own errors (too large, aborted) carry a 4xx status and a safe message.
    const status = typeof err === 'object' && err !== null ? (err as { status?: unknown }).status : undefined;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      answer(res, status, { code: 'PARAM_ERROR', message: describeError(err) });
      return;
    }
    logger.error('wechatpay sandbox request failed', { path: req.originalUrl, error: describeError(err) });
    answer(res, 500, { code: 'SYSTEM_ERROR', message: '系统错误' });
  };
  router.use(errors);

  function transferBill(outBillNo: string) {
    const bill = transfers.bills.findAny(outBillNo);
    if (!bill) throw new Error(`the WeChat Pay sandbox has no transfer ${outBillNo}`);
    return bill;
  }

  const complaintOf = (complaintId: string) => {
    const c = complaints.find(complaintId);
    if (!c) throw new Error(`no complaint ${complaintId} at the WeChat Pay sandbox`);
    return c;
  };

  return {
    router,
    keys,
    sharing: (transactionId) => sharings.snapshot(transactionId, Date.now()),
    receivers: (subMchid) => sharings.listReceivers(subMchid),
    returns: (transactionId) => sharings.returnsOf(transactionId, Date.now()),
    unfreezes: (transactionId) => sharings.unfreezesOf(transactionId),
    abnormalRefundApplication: (subMchid, outRefundNo) => {
      const application = store.findRefund(subMchid, outRefundNo)?.abnormalApplication;
      return application && { ...application };
    },
    transactions: () =>
      store.allOrders(Date.now()).map((o) => ({
        out_trade_no: o.request.out_trade_no,
        description: o.request.description,
        trade_state: o.state,
        total: o.request.amount.total,
        ...(o.request.payer?.sp_openid ? { sp_openid: o.request.payer.sp_openid } : {}),
      })),
    codepay: (outTradeNo) => {
      const order = store.peekOrder(keys.spMchid, outTradeNo);
      if (!order?.codepay) return undefined;
      const { requests, reverses, givenBack } = order.codepay;
      return {
        state: order.state,
        kept: order.state === 'SUCCESS' || order.state === 'REFUND',
        requests,
        reverses,
        givenBack,
      };
    },
    applyment: (businessCode) => applyments.peek(keys.spMchid, businessCode),
    platformCertificates: () => platform.listCertificates(),
    rotatePlatformCertificate() {
      const next = platform.rotate();
      logger.info('wechatpay sandbox platform certificate issued', { serial_no: next.serial });
      return next;
    },
    holdStatement: (day, requests) => statements.hold(day, requests),
    useLegacyStatement: (subMchid, legacy = true) => statements.useLegacyLayout(subMchid, legacy),
    expireStatementLinks: (count = 1) => statements.expireLinks(count),
    statementRequests: (day) => statements.requests(day),
    release: (outTradeNo) => lost.release(outTradeNo),
    confirmTransfer: (outBillNo) => transfers.confirm(transferBill(outBillNo)),
    expireTransfer: (outBillNo) => transfers.expire(transferBill(outBillNo)),
    transferCreates: (outBillNo) => transfers.bills.createCount(outBillNo),
    transferConfirmUrl: (packageInfo) => transfers.confirmUrl(packageInfo),
    idle: (outTradeNo) => background.idle(outTradeNo),
    openComplaint(outTradeNo, complaint) {
      const order = store.peekOrder(keys.spMchid, outTradeNo);
      if (!order) throw new Error(`no order ${outTradeNo} at the WeChat Pay sandbox`);
      return complaints.open(order, complaint);
    },
    complaint: (complaintId) => complaints.find(complaintId),
    refundsOf(outTradeNo) {
      const order = store.peekOrder(keys.spMchid, outTradeNo);
      return (order?.refundKeys ?? []).map((key) => {
        const r = store.findRefundByKey(key)!;
        return { outRefundNo: r.request.out_refund_no, amount: r.request.amount.refund, status: r.status };
      });
    },
    payerResponds: (complaintId, text) => complaints.userResponds(complaintOf(complaintId), text),
    payerContinues: (complaintId, text) => complaints.continues(complaintOf(complaintId), text),
    complaintNotifyUrl: () => complaints.notifyUrlOf(keys.spMchid),
    papayContract: (contractCode) => papay.view(contractCode),
    steerDeductions: (contractCode, ...steers) => papay.steer(contractCode, steers),
    cancelAfterNotice: (contractCode) => papay.cancelAfterNotice(contractCode),
    buyerUnsigns(contractCode) {
      const c = papay.findByCode(contractCode);
      if (!c) throw new Error(`no contract ${contractCode} at the WeChat Pay sandbox`);
      papay.terminate(c, '2', '用户解约');
    },
    loseContractNotifications: (contractCode) => papay.loseNotifications(contractCode),
    close() {
      transfers.close();
      callbacks.clear();
      background.close();
    },
  };
}
