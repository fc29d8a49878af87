/**
 * An offline WeChat Pay API v3 sandbox for the service-provider ("partner") payment APIs, as an
 * Express router: create (JSAPI, APP, H5, Native), query, close, refund, refund query and
 * abnormal refund, profit sharing (add a receiver, share, query a sharing order, unfreeze,
 * return and query a return), onboarding (media
 * upload, applyment submit and query, in applyment.ts), each request's
 * WECHATPAY2-SHA256-RSA2048 signature checked and every answer signed with the platform key,
 * plus a buyer's checkout page and signed, encrypted callbacks retried on WeChat's rhythm. Any
 * v3 client with its response verification on can talk to it; it is written on node:crypto
 * alone (./wire.ts) so that such a test is one of interoperability.
 *
 * Longer than 300 lines: the whole HTTP surface of the simulated API in one router, the way the
 * sandbox upstream's simulator.ts is, with each endpoint's request schema; its state and
 * transitions live in store.ts, sharing.ts and applyment.ts, its crypto in wire.ts, its page in
 * pages.ts.
 */
import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import Joi from 'joi';
import { readRawBody } from '../../src/platform/http/raw-body';
import { Background } from '../background';
import { qrImage } from '../../src/platform/qr';
import { WechatpayApplymentStore, applymentRoutes, readMediaForm, type ApplymentRecord } from './applyment';
import { certificatesView, issuePlatformCertificate, type PlatformCertificate } from './certificates';
import { describeError, jsonBody, pageOrScriptBody, paramError, queryParam, validate } from './http';
import type { WechatpaySandboxKeys } from './keys';
import { CHECKOUT_CSP, checkoutPage, notFoundPage } from './pages';
import {
  RECEIVER_TYPES,
  RELATION_TYPES,
  WechatpaySharingStore,
  receiverView,
  sharingView,
  returnView,
  type AddReceiverRequest,
  type CreateReturnRequest,
  type CreateSharingRequest,
  type UnfreezeRequest,
  type WechatpaySandboxReceiver,
  type WechatpaySandboxReturn,
  type WechatpaySandboxSharing,
  type WechatpaySandboxUnfreeze,
} from './sharing';
import {
  WechatpaySandboxStore,
  refundNoticeView,
  refundView,
  transactionView,
  type AbnormalRefundApplication,
  type AbnormalRefundRequest,
  type BuyerResult,
  type CreateOrderRequest,
  type CreateRefundRequest,
  type OrderRecord,
  type RefundRecord,
  type TradeKind,
} from './store';
import {
  WechatpayError,
  decryptSensitive,
  encryptResource,
  parseRfc3339,
  requestId,
  rfc3339Cst,
  verifyRequest,
  wechatpayHeaders,
  type PlatformSigner,
} from './wire';

export interface WechatpaySandboxLogger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

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
  /** How long a refund or a profit-sharing order stays PROCESSING, before timeScale; 1000 by default. */
  refundDelayMs?: number;
  /**
   * How long a return whose description holds `[sandbox:return-processing]` stays PROCESSING,
   * before timeScale; refundDelayMs by default.
   */
  returnDelayMs?: number;
  logger?: WechatpaySandboxLogger;
  /** How callbacks are posted; the global fetch unless set. */
  callbackFetch?: typeof fetch;
  /**
   * Where callbacks, their retries and settlements due after an answer run (../background.ts),
   * each under its order's out_trade_no; a test passes one to read what was scheduled. One of its
   * own by default.
   */
  background?: Background;
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
  /** Cancels pending refunds, sharing orders and callbacks, and aborts callbacks in flight. */
  close(): void;
}

/** WeChat's resending rhythm for an unacknowledged callback, after the first attempt. */
export const CALLBACK_RETRY_DELAYS_MS: readonly number[] = [
  15, 15, 30, 180, 600, 1200, 1800, 1800, 1800, 3600, 10800, 10800, 10800, 21600, 21600,
].map((s) => s * 1000);
/** WeChat gives a notify_url about 5 s to answer. */
const CALLBACK_TIMEOUT_MS = 5_000;
const LATE_CALLBACK_MS = 5_000;
const DUPLICATE_GAP_MS = 1_000;
const MAX_BODY_BYTES = 1024 * 1024;
const KINDS: readonly TradeKind[] = ['jsapi', 'app', 'h5', 'native'];
const BUYER_RESULTS: readonly BuyerResult[] = ['pay', 'userpaying', 'payerror'];

const silentLogger: WechatpaySandboxLogger = { info() {}, warn() {}, error() {} };

// ---- request schemas: documented fields only, so a client's misspelt field is caught here ----

const mchid = Joi.string().pattern(/^\d{1,32}$/);
const appid = Joi.string().min(1).max(32);
const openid = Joi.string().min(1).max(128);
const outTradeNo = Joi.string().pattern(/^[A-Za-z0-9_\-|*]{6,32}$/);
/** Every v3 amount is a 32-bit int of fen: 2^31 − 1 at most, or PARAM_ERROR. */
const fen = Joi.number()
  .integer()
  .min(1)
  .max(2 ** 31 - 1);
const httpUrl = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .max(256);
const rfc3339 = Joi.string().custom((value: string, helpers) =>
  parseRfc3339(value) === undefined ? helpers.error('string.isoDate') : value,
);

const createOrderSchema = Joi.object<CreateOrderRequest>({
  sp_appid: appid.required(),
  sp_mchid: mchid.required(),
  sub_appid: appid,
  sub_mchid: mchid.required(),
  description: Joi.string().min(1).max(127).required(),
  out_trade_no: outTradeNo.required(),
  time_expire: rfc3339,
  attach: Joi.string().max(128),
  notify_url: httpUrl.required(),
  goods_tag: Joi.string().max(32),
  support_fapiao: Joi.boolean(),
  settle_info: Joi.object({ profit_sharing: Joi.boolean().required() }),
  amount: Joi.object({ total: fen.required(), currency: Joi.string().valid('CNY') }).required(),
  payer: Joi.object({ sp_openid: openid, sub_openid: openid }),
  detail: Joi.object().unknown(true),
  scene_info: Joi.object({
    payer_client_ip: Joi.string().ip({ cidr: 'forbidden' }).required(),
    device_id: Joi.string().max(32),
    store_info: Joi.object().unknown(true),
    h5_info: Joi.object({
      type: Joi.string().valid('iOS', 'Android', 'Wap').required(),
      app_name: Joi.string().max(64),
      app_url: Joi.string().max(128),
      bundle_id: Joi.string().max(128),
      package_name: Joi.string().max(128),
    }),
  }),
}).required();

const closeSchema = Joi.object<{ sp_mchid: string; sub_mchid: string }>({
  sp_mchid: mchid.required(),
  sub_mchid: mchid.required(),
}).required();

const createRefundSchema = Joi.object<CreateRefundRequest>({
  sub_mchid: mchid.required(),
  transaction_id: Joi.string().pattern(/^\d{1,32}$/),
  out_trade_no: outTradeNo,
  out_refund_no: Joi.string()
    .pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/)
    .required(),
  reason: Joi.string().max(80),
  notify_url: httpUrl,
  funds_account: Joi.string().valid('AVAILABLE', 'UNSETTLED'),
  amount: Joi.object({
    refund: fen.required(),
    total: fen.required(),
    currency: Joi.string().valid('CNY').required(),
  }).required(),
  goods_detail: Joi.array(),
})
  .or('transaction_id', 'out_trade_no')
  .required();

const transactionId = Joi.string().pattern(/^\d{1,32}$/);
const outOrderNo = Joi.string().pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/);
const receiverType = Joi.string().valid(...RECEIVER_TYPES);
const receiverAccount = Joi.string().min(1).max(64);
/** A field sealed with the platform public key: base64 of a 2048-bit RSA-OAEP block and more. */
const sealed = Joi.string().min(1).max(1024);
const sharingDescription = Joi.string().min(1).max(80);

const addReceiverSchema = Joi.object<AddReceiverRequest>({
  sub_mchid: mchid.required(),
  appid: appid.required(),
  sub_appid: appid,
  type: receiverType.required(),
  account: receiverAccount.required(),
  name: sealed,
  relation_type: Joi.string()
    .valid(...RELATION_TYPES)
    .required(),
  custom_relation: Joi.string().min(1).max(10),
}).required();

const createSharingSchema = Joi.object<CreateSharingRequest>({
  sub_mchid: mchid.required(),
  appid: appid.required(),
  sub_appid: appid,
  transaction_id: transactionId.required(),
  out_order_no: outOrderNo.required(),
  receivers: Joi.array()
    .items(
      Joi.object({
        type: receiverType.required(),
        account: receiverAccount.required(),
        name: sealed,
        amount: fen.required(),
        description: sharingDescription.required(),
      }),
    )
    .min(1)
    .max(50)
    .required(),
  unfreeze_unsplit: Joi.boolean().required(),
}).required();

const unfreezeSchema = Joi.object<UnfreezeRequest>({
  sub_mchid: mchid.required(),
  transaction_id: transactionId.required(),
  out_order_no: outOrderNo.required(),
  description: sharingDescription.required(),
}).required();

/**
 * The debit cards WeChat Pay pays an abnormal refund to (bank_type), as its documentation lists
 * them: written here again rather than taken from durapay's adapter, which this sandbox checks.
 */
const ABNORMAL_REFUND_BANKS = [
  'CMB_DEBIT',
  'COMM_DEBIT',
  'ABC_DEBIT',
  'CCB_DEBIT',
  'ICBC_DEBIT',
  'BOC_DEBIT',
  'PAB_DEBIT',
  'SPDB_DEBIT',
  'CITIC_DEBIT',
  'CEB_DEBIT',
  'CMBC_DEBIT',
  'CIB_DEBIT',
  'GDB_DEBIT',
  'PSBC_DEBIT',
  'NBCB_DEBIT',
];

const outReturnNo = Joi.string().pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/);

const createReturnSchema = Joi.object<CreateReturnRequest>({
  sub_mchid: mchid.required(),
  order_id: Joi.string().min(1).max(64),
  out_order_no: outOrderNo,
  out_return_no: outReturnNo.required(),
  return_mchid: mchid.required(),
  amount: fen.required(),
  description: sharingDescription.required(),
})
  .or('order_id', 'out_order_no')
  .required();

const abnormalRefundSchema = Joi.object<AbnormalRefundRequest>({
  sub_mchid: mchid.required(),
  out_refund_no: Joi.string()
    .pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/)
    .required(),
  type: Joi.string().valid('USER_BANK_CARD', 'MERCHANT_BANK_CARD').required(),
  bank_type: Joi.string().valid(...ABNORMAL_REFUND_BANKS),
  bank_account: sealed,
  real_name: sealed,
}).required();

const buyerSchema = Joi.object<{ result: BuyerResult }>({
  result: Joi.string()
    .valid(...BUYER_RESULTS)
    .required(),
}).required();

export function createWechatpaySandbox(options: WechatpaySandboxOptions): WechatpaySandbox {
  const { keys } = options;
  const logger = options.logger ?? silentLogger;
  const scale = options.timeScale ?? 1;
  const refundDelayMs = (options.refundDelayMs ?? 1000) * scale;
  const send = options.callbackFetch ?? fetch;
  const base = options.publicBaseUrl.replace(/\/+$/, '');
  const publicKeySigner: PlatformSigner = {
    publicKeyId: keys.platformPublicKeyId,
    privateKey: createPrivateKey(keys.platformPrivateKeyPem),
  };
  // The public key's pair has a certificate too: either name opens what the other sealed.
  const certificates: PlatformCertificate[] = [
    issuePlatformCertificate({
      privateKeyPem: keys.platformPrivateKeyPem,
      publicKeyPem: keys.platformPublicKeyPem,
    }),
  ];
  /** Who signs now: the public key, or the newest certificate. */
  function signer(): PlatformSigner {
    if (options.platformIdentity !== 'certificate') return publicKeySigner;
    const newest = certificates[certificates.length - 1]!;
    return { publicKeyId: newest.serial, privateKey: newest.privateKey };
  }
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

  const checkoutUrl = (order: OrderRecord) => `${base}/checkout/${order.token}`;

  /** Every answer is signed over the exact bytes sent, errors and 204 included. */
  function answer(res: Response, status: number, body?: unknown): void {
    const raw = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body), 'utf8');
    res.status(status).set(wechatpayHeaders(signer(), raw)).set('Request-ID', requestId());
    if (body === undefined) {
      res.end();
      return;
    }
    res.set('Content-Type', 'application/json').send(raw);
  }

  // ---- timers and callbacks ----

  /**
   * Runs `task` after `ms` unless close() came first, under the out_trade_no of the order it is
   * for (none for a sharing order's); a task's failure is logged, never thrown.
   */
  function later(ms: number, task: () => void | Promise<void>, outTradeNo?: string): void {
    background.later(ms, task, outTradeNo);
  }

  function notification(eventType: string, summary: string, kind: string, plaintext: unknown): Buffer {
    const resource = encryptResource(keys.apiV3Key, JSON.stringify(plaintext), kind, kind);
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
  async function deliver(
    url: string,
    raw: Buffer,
    meta: Record<string, unknown>,
    outTradeNo: string,
    attempt = 0,
  ): Promise<void> {
    if (background.signal.aborted) return;
    let outcome: string;
    try {
      const res = await send(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...wechatpayHeaders(signer(), raw) },
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
    later(wait * scale, () => deliver(url, raw, meta, outTradeNo, attempt + 1), outTradeNo);
  }

  /** Payment callbacks held until a refund of their order has been announced (out of order). */
  const heldPaymentCallbacks = new Map<OrderRecord, () => void>();

  function notifyPaid(order: OrderRecord): void {
    const { description, notify_url: url, out_trade_no: outTradeNo } = order.request;
    const meta = { event_type: 'TRANSACTION.SUCCESS', out_trade_no: outTradeNo, url };
    if (description.includes('[sandbox:callback-lost]')) {
      logger.info('wechatpay sandbox payment callback dropped (fault injection)', meta);
      return;
    }
    const raw = notification('TRANSACTION.SUCCESS', '支付成功', 'transaction', transactionView(order));
    if (description.includes('[sandbox:callback-out-of-order]')) {
      logger.info(
        'wechatpay sandbox payment callback held until a refund is announced (fault injection)',
        meta,
      );
      heldPaymentCallbacks.set(order, () => later(0, () => deliver(url, raw, meta, outTradeNo), outTradeNo));
      return;
    }
    const first = description.includes('[sandbox:callback-late]') ? LATE_CALLBACK_MS * scale : 0;
    later(first, () => deliver(url, raw, meta, outTradeNo), outTradeNo);
    if (description.includes('[sandbox:callback-duplicate]')) {
      later(first + DUPLICATE_GAP_MS * scale, () => deliver(url, raw, meta, outTradeNo), outTradeNo);
    }
  }

  const REFUND_SUMMARIES = { SUCCESS: '退款成功', ABNORMAL: '退款异常', CLOSED: '退款关闭' } as const;

  /** Settles a due refund once; only the call that settled it posts its callback. */
  function settle(refund: RefundRecord): void {
    if (!store.settleRefund(refund, Date.now())) return;
    const outTradeNo = refund.order.request.out_trade_no;
    const status = refund.status as keyof typeof REFUND_SUMMARIES;
    const meta = { event_type: `REFUND.${status}`, out_refund_no: refund.request.out_refund_no };
    logger.info('wechatpay sandbox refund settled', meta);
    const url = refund.request.notify_url;
    if (url !== undefined && (refund.request.reason ?? '').includes('[sandbox:callback-lost]')) {
      logger.info('wechatpay sandbox refund callback dropped (fault injection)', meta);
    } else if (url !== undefined) {
      const raw = notification(
        `REFUND.${status}`,
        REFUND_SUMMARIES[status],
        'refund',
        refundNoticeView(refund),
      );
      later(0, () => deliver(url, raw, { ...meta, url }, outTradeNo), outTradeNo);
    }
    // The payment's own callback, held back, now comes after its refund's.
    const held = heldPaymentCallbacks.get(refund.order);
    if (held) {
      heldPaymentCallbacks.delete(refund.order);
      later(DUPLICATE_GAP_MS * scale, held, outTradeNo);
    }
  }

  // ---- routes ----

  const router = express.Router({ caseSensitive: true });
  // Its own bodies, as sent: the signature covers the exact bytes (a host that kept them is fine).
  router.use(readRawBody({ limit: MAX_BODY_BYTES }));

  async function showCheckout(order: OrderRecord | undefined, res: Response): Promise<void> {
    res.set('Content-Security-Policy', CHECKOUT_CSP).set('Cache-Control', 'no-store');
    if (!order) {
      res.status(404).type('html').send(notFoundPage());
      return;
    }
    const view = transactionView(order);
    res.type('html').send(
      checkoutPage({
        description: order.request.description,
        outTradeNo: order.request.out_trade_no,
        subMchid: order.request.sub_mchid,
        tradeType: String(view.trade_type),
        tradeState: order.state,
        tradeStateDesc: String(view.trade_state_desc),
        total: order.request.amount.total,
        payable: ['NOTPAY', 'USERPAYING', 'PAYERROR'].includes(order.state),
        qrImage: order.kind === 'native' ? await qrImage(checkoutUrl(order)) : undefined,
      }),
    );
  }

  /** The buyer's choice; a form from the page is sent back to the page, a script gets JSON. */
  function actAsBuyer(order: OrderRecord | undefined, req: Request, res: Response): void {
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    const { body, fromPage } = pageOrScriptBody(req);
    const { result } = validate(buyerSchema, body);
    const { paid } = store.buyerActs(order, result, Date.now());
    logger.info('wechatpay sandbox buyer acted', { out_trade_no: order.request.out_trade_no, result });
    if (paid) notifyPaid(order);
    if (fromPage) {
      res.redirect(303, req.originalUrl);
      return;
    }
    answer(res, 200, { trade_state: order.state });
  }

  router.get('/checkout/prepay/:prepay_id', (req, res) =>
    showCheckout(store.findOrderByPrepayId(req.params.prepay_id, Date.now()), res),
  );
  router.post('/checkout/prepay/:prepay_id', (req, res) =>
    actAsBuyer(store.findOrderByPrepayId(req.params.prepay_id, Date.now()), req, res),
  );
  router.get('/checkout/:token', (req, res) =>
    showCheckout(store.findOrderByToken(req.params.token, Date.now()), res),
  );
  router.post('/checkout/:token', (req, res) =>
    actAsBuyer(store.findOrderByToken(req.params.token, Date.now()), req, res),
  );

  // Everything under /v3 is the merchant's API: signed by the merchant's key, or refused.
  router.use('/v3', async (req, res, next) => {
    // A media upload is signed over its `meta` part, not its multipart bytes.
    let signed = req.rawBody ?? Buffer.alloc(0);
    if (req.method === 'POST' && req.path === '/merchant/media/upload') {
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

  function requireSpMchid(res: Response, spMchid: string): void {
    if (spMchid !== res.locals.mchid) {
      throw new WechatpayError(
        400,
        'INVALID_REQUEST',
        `sp_mchid ${spMchid} is not the mchid that signed the request`,
      );
    }
  }

  function requireSpAppid(appidGiven: string, spMchid: string): void {
    if (appidGiven !== keys.spAppid) {
      throw new WechatpayError(
        400,
        'APPID_MCHID_NOT_MATCH',
        `appid ${appidGiven} is not bound to sp_mchid ${spMchid}`,
      );
    }
  }

  router.post('/v3/pay/partner/transactions/:kind', (req, res) => {
    const kind = req.params.kind as TradeKind;
    if (!KINDS.includes(kind))
      throw new WechatpayError(404, 'NOT_FOUND', `no such API: ${req.method} ${req.path}`);
    const body = validate(createOrderSchema, jsonBody(req));
    requireSpMchid(res, body.sp_mchid);
    if (body.sp_appid !== keys.spAppid) {
      throw new WechatpayError(
        400,
        'APPID_MCHID_NOT_MATCH',
        `sp_appid ${body.sp_appid} is not bound to sp_mchid ${body.sp_mchid}`,
      );
    }
    if (body.payer?.sub_openid !== undefined && body.sub_appid === undefined) {
      throw paramError('sub_appid is required when payer.sub_openid is given');
    }
    if (kind === 'jsapi' && body.payer?.sp_openid === undefined && body.payer?.sub_openid === undefined) {
      throw paramError('payer.sp_openid or payer.sub_openid is required for JSAPI');
    }
    if (kind === 'h5' && body.scene_info?.h5_info === undefined) {
      throw paramError('scene_info.h5_info is required for H5 (with scene_info.payer_client_ip)');
    }
    if (body.description.includes('[sandbox:system-error]')) {
      throw new WechatpayError(500, 'SYSTEM_ERROR', '系统错误 (fault injection: [sandbox:system-error])');
    }
    const now = Date.now();
    const expiresAt = body.time_expire === undefined ? undefined : parseRfc3339(body.time_expire);
    const { order, created } = store.createOrder(kind, body, expiresAt, now);
    if (created) logger.info('wechatpay sandbox order created', { out_trade_no: body.out_trade_no, kind });
    if (kind === 'h5') answer(res, 200, { h5_url: checkoutUrl(order) });
    else if (kind === 'native') answer(res, 200, { code_url: checkoutUrl(order) });
    else answer(res, 200, { prepay_id: order.prepayId });
  });

  function queriedOrder(
    req: Request,
    res: Response,
    find: (spMchid: string, subMchid: string) => OrderRecord | undefined,
  ) {
    const spMchid = queryParam(req, 'sp_mchid');
    const subMchid = queryParam(req, 'sub_mchid');
    requireSpMchid(res, spMchid);
    const order = find(spMchid, subMchid);
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    return order;
  }

  router.get('/v3/pay/partner/transactions/out-trade-no/:out_trade_no', (req, res) => {
    const order = queriedOrder(req, res, (sp, sub) =>
      store.findOrder(sp, req.params.out_trade_no, sub, Date.now()),
    );
    answer(res, 200, transactionView(order));
  });

  router.get('/v3/pay/partner/transactions/id/:transaction_id', (req, res) => {
    const order = queriedOrder(req, res, (sp, sub) =>
      store.findOrderByTransactionId(sp, req.params.transaction_id, sub, Date.now()),
    );
    answer(res, 200, transactionView(order));
  });

  router.post('/v3/pay/partner/transactions/out-trade-no/:out_trade_no/close', (req, res) => {
    const body = validate(closeSchema, jsonBody(req));
    requireSpMchid(res, body.sp_mchid);
    const now = Date.now();
    const order = store.findOrder(body.sp_mchid, req.params.out_trade_no, body.sub_mchid, now);
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    store.closeOrder(order, now);
    logger.info('wechatpay sandbox order closed', { out_trade_no: req.params.out_trade_no });
    answer(res, 204);
  });

  router.post('/v3/refund/domestic/refunds', (req, res) => {
    const body = validate(createRefundSchema, jsonBody(req));
    const { refund, created } = store.createRefund(String(res.locals.mchid), body, Date.now());
    if (created) {
      logger.info('wechatpay sandbox refund accepted', { out_refund_no: body.out_refund_no });
      later(refundDelayMs, () => settle(refund), refund.order.request.out_trade_no);
    }
    answer(res, 200, refundView(refund));
  });

  router.get('/v3/refund/domestic/refunds/:out_refund_no', (req, res) => {
    const subMchid = queryParam(req, 'sub_mchid');
    const refund = store.findRefund(subMchid, req.params.out_refund_no);
    if (!refund) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '退款单不存在');
    // Due but its timer not yet run: a query never sees a refund older than its delay PROCESSING.
    if (Date.now() >= refund.processingSince + refundDelayMs) settle(refund);
    answer(res, 200, refundView(refund));
  });

  // 发起异常退款: an ABNORMAL refund paid to a bank card instead, then SUCCESS with its callback.
  router.post('/v3/refund/domestic/refunds/:refund_id/apply-abnormal-refund', (req, res) => {
    const body = validate(abnormalRefundSchema, jsonBody(req));
    const refund = store.findRefund(body.sub_mchid, body.out_refund_no);
    if (!refund || refund.spMchid !== res.locals.mchid || refund.refundId !== req.params.refund_id) {
      throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '退款单不存在');
    }
    if (body.type === 'USER_BANK_CARD') {
      for (const field of ['bank_type', 'bank_account', 'real_name'] as const) {
        if (body[field] === undefined) throw paramError(`${field} is required when type is USER_BANK_CARD`);
      }
    }
    const application: AbnormalRefundApplication = {
      type: body.type,
      ...(body.bank_type === undefined ? {} : { bank_type: body.bank_type }),
      ...(body.bank_account === undefined
        ? {}
        : { bank_account: unseal(req, body.bank_account, 'bank_account') }),
      ...(body.real_name === undefined ? {} : { real_name: unseal(req, body.real_name, 'real_name') }),
      appliedAt: Date.now(),
    };
    if (store.applyAbnormal(refund, application, application.appliedAt)) {
      // Never the card or the name in a log line.
      logger.info('wechatpay sandbox abnormal refund applied', {
        out_refund_no: body.out_refund_no,
        type: body.type,
      });
      later(refundDelayMs, () => settle(refund), refund.order.request.out_trade_no);
    }
    answer(res, 200, refundView(refund));
  });

  // ---- profit sharing (分账) ----

  /** A sealed field's plaintext; the request must name the platform key that sealed it. */
  function unseal(req: Request, ciphertext: string, field: string): string {
    const serial = req.get('Wechatpay-Serial');
    const key =
      serial === keys.platformPublicKeyId
        ? publicKeySigner.privateKey
        : certificates.find((c) => c.serial === serial?.toUpperCase())?.privateKey;
    if (key === undefined) {
      throw paramError(
        serial === undefined
          ? `the Wechatpay-Serial header is required when ${field} is encrypted: it names the platform public key used`
          : `Wechatpay-Serial ${serial} is neither the platform public key ${keys.platformPublicKeyId} nor a platform certificate`,
      );
    }
    const plain = decryptSensitive(key, ciphertext);
    if (plain === undefined || plain.trim() === '') {
      throw paramError(
        `${field} does not decrypt: it must be base64 of RSA-OAEP (SHA-1) under the platform public key`,
      );
    }
    return plain;
  }

  router.post('/v3/profitsharing/receivers/add', (req, res) => {
    const body = validate(addReceiverSchema, jsonBody(req));
    requireSpAppid(body.appid, String(res.locals.mchid));
    if (body.type === 'MERCHANT_ID' && !/^\d{1,32}$/.test(body.account)) {
      throw paramError('account of a MERCHANT_ID receiver is a merchant id, digits');
    }
    if (body.type === 'MERCHANT_ID' && body.name === undefined) {
      throw paramError("name (the merchant's full name, encrypted) is required for a MERCHANT_ID receiver");
    }
    if (body.type === 'PERSONAL_SUB_OPENID' && body.sub_appid === undefined) {
      throw paramError('sub_appid is required for a PERSONAL_SUB_OPENID receiver');
    }
    if (body.relation_type === 'CUSTOM' && body.custom_relation === undefined) {
      throw paramError('custom_relation is required when relation_type is CUSTOM');
    }
    const name = body.name === undefined ? undefined : unseal(req, body.name, 'name');
    const receiver = sharings.addReceiver(body, name);
    logger.info('wechatpay sandbox sharing receiver added', {
      sub_mchid: body.sub_mchid,
      type: body.type,
      account: body.account,
    });
    answer(res, 200, receiverView(receiver, body.sub_mchid));
  });

  router.post('/v3/profitsharing/orders/unfreeze', (req, res) => {
    const body = validate(unfreezeSchema, jsonBody(req));
    const spMchid = String(res.locals.mchid);
    const now = Date.now();
    const paid = store.findOrderByTransactionId(spMchid, body.transaction_id, body.sub_mchid, now);
    const { sharing, created } = sharings.unfreeze(spMchid, body, paid, now);
    if (created) logger.info('wechatpay sandbox sharing unfrozen', { out_order_no: body.out_order_no });
    answer(res, 200, sharingView(sharing));
  });

  router.post('/v3/profitsharing/orders', (req, res) => {
    const body = validate(createSharingSchema, jsonBody(req));
    const spMchid = String(res.locals.mchid);
    requireSpAppid(body.appid, spMchid);
    if (body.receivers.some((r) => r.type === 'PERSONAL_SUB_OPENID') && body.sub_appid === undefined) {
      throw paramError('sub_appid is required for a PERSONAL_SUB_OPENID receiver');
    }
    const names = body.receivers.map((r, i) =>
      r.name === undefined ? undefined : unseal(req, r.name, `receivers[${i}].name`),
    );
    const now = Date.now();
    const paid = store.findOrderByTransactionId(spMchid, body.transaction_id, body.sub_mchid, now);
    const { sharing, created } = sharings.createSharing(spMchid, body, names, paid, now);
    if (created) {
      logger.info('wechatpay sandbox sharing accepted', { out_order_no: body.out_order_no });
      later(refundDelayMs, async () => {
        if (sharings.settle(sharing, Date.now())) {
          logger.info('wechatpay sandbox sharing finished', { out_order_no: body.out_order_no });
        }
      });
    }
    answer(res, 200, sharingView(sharing));
  });

  router.get('/v3/profitsharing/orders/:out_order_no', (req, res) => {
    const subMchid = queryParam(req, 'sub_mchid');
    const transaction = queryParam(req, 'transaction_id');
    const sharing = sharings.findSharing(
      String(res.locals.mchid),
      subMchid,
      req.params.out_order_no,
      transaction,
      Date.now(),
    );
    if (!sharing) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '分账单不存在');
    answer(res, 200, sharingView(sharing));
  });

  // 请求分账回退 and its query: returns from merchant receivers, by out_order_no (or order_id).
  router.post('/v3/profitsharing/return-orders', (req, res) => {
    const body = validate(createReturnSchema, jsonBody(req));
    const { ret, created } = sharings.createReturn(String(res.locals.mchid), body, Date.now());
    if (created) {
      logger.info('wechatpay sandbox sharing return accepted', {
        out_return_no: body.out_return_no,
        result: ret.result,
      });
    }
    answer(res, 200, returnView(ret));
  });

  router.get('/v3/profitsharing/return-orders/:out_return_no', (req, res) => {
    const ret = sharings.findReturn(
      String(res.locals.mchid),
      queryParam(req, 'sub_mchid'),
      req.params.out_return_no,
      queryParam(req, 'out_order_no'),
      Date.now(),
    );
    if (!ret) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '记录不存在');
    answer(res, 200, returnView(ret));
  });

  router.get('/v3/certificates', (_req, res) => {
    answer(res, 200, certificatesView(certificates, keys.apiV3Key));
  });

  applymentRoutes(router, {
    store: applyments,
    base,
    answer,
    unseal,
    log: (message, meta) => logger.info(message, meta),
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
    applyment: (businessCode) => applyments.peek(keys.spMchid, businessCode),
    platformCertificates: () => [...certificates],
    rotatePlatformCertificate() {
      const next = issuePlatformCertificate();
      certificates.push(next);
      logger.info('wechatpay sandbox platform certificate issued', { serial_no: next.serial });
      return next;
    },
    idle: (outTradeNo) => background.idle(outTradeNo),
    close() {
      heldPaymentCallbacks.clear();
      background.close();
    },
  };
}
