// Longer than 400 lines on purpose: the gateway's routes and the controls tests steer it by, side by side.
/**
 * An offline Alipay open-platform gateway as an Express router: `gateway.do` (API v2, RSA2) with
 * every request's signature checked against the app public key and every answer signed with the
 * Alipay private key, the app's submit of an order string (`/app-pay`, as the Alipay app would),
 * the buyer's cashier (`/cashier/<trade_no>`), the merchant's authorisation of the app
 * (`/oauth2/appToAppAuth.htm`, app-auth-page.ts) and the links of trade statements (bills.ts). Any client with its answer verification on can
 * talk to it; it is written on node:crypto alone (./wire.ts) so that such a test is one of
 * interoperability. The methods are in trade-methods.ts, barcode.ts (当面付 条码支付 and its
 * cancel), royalty-methods.ts, zft.ts, transfers.ts and app-auth.ts (the exchange, refresh and
 * query of app_auth_tokens, which a test may also mint).
 *
 * A trade whose subject holds `[sandbox:lost-until-released]` is paid as any other, but its
 * notification is never sent and every call naming it (a query, a close, a refund) has its
 * connection dropped, as a network that lost the way would, until a test releases it.
 */
import iconv from 'iconv-lite';
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import { BUYER_CODE_LIFETIME_MS, BuyerAuthBook, buyerAuthHandlers, buyerAuthRoutes } from './buyer-auth';
import { readRawBody } from '../../src/platform/http/raw-body';
import type { Background } from '../background';
import {
  appAuthHandlers,
  type AlipaySandboxAppAuth,
  type AppAuthGrant,
  type AppAuthLifetimes,
} from './app-auth';
import { appAuthPageRoutes } from './app-auth-page';
import { BARCODE_METHOD, BarcodeBook, barcodeHandlers, type BarcodeRequests } from './barcode';
import { BILL_DOWNLOAD_PATH, BILL_METHOD, StatementDesk } from './bills';
import { AlipayGateway, DroppedAnswer, type Call, type GatewayLogger, type Handler } from './gateway';
import { pageOrScriptBody, parseBizContent, readGatewayRequest, type GatewayRequest } from './http';
import type { AlipaySandboxKeys } from './keys';
import {
  AlipayComplaintDesk,
  COMPLAINT_IMAGE_PATH,
  type AlipayComplaintRecord,
  type OpenAlipayComplaint,
} from './complaints';
import type { NotificationHistory } from './notify';
import { CASHIER_CSP, cashierPage, errorPage, notFoundPage } from './pages';
import {
  RoyaltyBook,
  type AlipaySandboxRelation,
  type AlipaySandboxRoyaltyReturn,
  type AlipaySandboxSettlement,
  type AlipaySandboxUnfreeze,
} from './royalty';
import { royaltyHandlers } from './royalty-methods';
import type { PayMethod, TradeRecord } from './store';
import { PAGE_METHODS, openPaymentTrade, tradeHandlers } from './trade-methods';
import { checkCommonParams } from './verify';
import {
  TransferBook,
  transferHandlers,
  transferSnapshot,
  type AlipaySandboxTransfer,
  type TransferDelays,
} from './transfers';
import { tradeSnapshot, yuan, type AlipaySandboxTrade } from './views';
import {
  AlipayError,
  invalidArgument,
  missingArgument,
  responseKey,
  signedAnswer,
  success,
  systemError,
} from './wire';
import { ZftBook, zftHandlers, type AlipaySandboxZftOrder } from './zft';

export interface AlipaySandboxOptions {
  keys: AlipaySandboxKeys;
  /** Where the router is mounted as seen from outside, e.g. http://127.0.0.1:3000/alipay. */
  publicBaseUrl: string;
  /** Multiplies every delay (notification retries, slow refunds, trade timeouts); 1 by default. */
  timeScale?: number;
  /** How long a `[sandbox:slow]` refund stays processing, before timeScale; 1000 by default. */
  refundDelayMs?: number;
  logger?: GatewayLogger;
  /**
   * Where notifications, their retries and slow refunds due after an answer run
   * (../background.ts), each under its trade's out_trade_no; a test passes one to read what was
   * scheduled. A Scheduler of its own by default.
   */
  background?: Background;
  /** expires_in of the app_auth_tokens it hands out, in seconds; 365 days by default. */
  appAuthExpiresInSeconds?: number;
  /** re_expires_in of their refresh tokens, in seconds; 372 days by default. */
  appAuthReExpiresInSeconds?: number;
  /** How long an app_auth_code stays usable, before timeScale; a day by default (Alipay's). */
  appAuthCodeTtlMs?: number;
  /**
   * How long `[transfer:fail]` and `[transfer:slow]` transfers stay DEALING (1 s and 3 s by
   * default), in real time: not multiplied by timeScale, so that a query made after the create
   * still finds the transfer under way.
   */
  transferDelaysMs?: Partial<TransferDelays>;
  /**
   * How long a `confirms_later` buyer of a barcode payment (sandbox/wallet-buyers.ts) takes to
   * confirm in the wallet, before timeScale; 1000 by default.
   */
  buyerConfirmMs?: number;
  /** The app's gateway URL (应用网关) from the start, where its messages go; none by default. */
  gatewayUrl?: string;
}

export interface AlipaySandbox {
  router: Router;
  /**
   * Resolves once nothing is due or running for the trade: its notifications sent and
   * acknowledged or given up, its slow refunds done. Its expiry is time passing, not work for the
   * trade, and is not waited for (without a trade, everything is, expiries included).
   */
  idle(outTradeNo?: string): Promise<void>;
  /** Stops every timer (notification retries, slow refunds, expiries) and aborts notifications. */
  close(): void;
  /** A copy of a trade as it stands now, or undefined when the gateway never saw it. */
  trade(outTradeNo: string): AlipaySandboxTrade | undefined;
  /** Every trade the gateway holds, as a query would see it now: the ledger a test counts. */
  trades(): AlipaySandboxTrade[];
  /** Every notification POST made for a trade. */
  notifications(outTradeNo: string): NotificationHistory;
  /** A trade's royalty settle orders, as a query would see them now. */
  settlements(tradeNo: string): AlipaySandboxSettlement[];
  /** The royalty receivers bound to the app. */
  relations(): AlipaySandboxRelation[];
  /** The shares a trade's refunds gave back (refund_royalty_parameters), oldest first. */
  royaltyReturns(tradeNo: string): AlipaySandboxRoyaltyReturn[];
  /** A trade's unfreeze (a settle with royalty_finish alone), or undefined. */
  royaltyUnfreeze(tradeNo: string): AlipaySandboxUnfreeze | undefined;
  /** A secondary merchant's application by external_id; a look does not move it. */
  zftOrder(externalId: string): AlipaySandboxZftOrder | undefined;
  /** How many requests of a method arrived (gateway.do and the app's submit), valid or not. */
  requests(method: string): number;
  /**
   * How many alipay.trade.pay and alipay.trade.cancel requests named an out_trade_no (valid or
   * not, whether a trade was made or not): a barcode payment asked once is one charge at most.
   */
  barcodeRequests(outTradeNo: string): BarcodeRequests;
  /**
   * A merchant's authorisation of an app, as if the merchant had granted it: its app_auth_token,
   * which alipay.open.auth.token.app.query answers `valid` until its auth_end (`invalid` after),
   * and as unknown (isv.invalid-app-auth-token) to any app but `isvAppId` (this gateway's app).
   * Its appRefreshToken refreshes it as a token from the page's code would be.
   */
  mintAppAuthToken(grant?: AppAuthGrant): AlipaySandboxAppAuth;
  /**
   * Sets expires_in and re_expires_in (seconds) of the tokens made from now on, by the exchange
   * of a code, a refresh or a mint; answers the lifetimes now in force.
   */
  setAppAuthLifetimes(lifetimes: Partial<AppAuthLifetimes>): AppAuthLifetimes;
  /**
   * Ends now an app_auth_token (query: `invalid`; trade calls: 20001) or a refresh token
   * (refresh: isv.refresh-token-time-out), found by its value; false when the gateway has neither.
   */
  expireAppAuth(tokenOrRefreshToken: string): boolean;
  /** A token as it stands now, found by its app_auth_token or its refresh token. */
  appAuth(tokenOrRefreshToken: string): AlipaySandboxAppAuth | undefined;
  /**
   * The next `requests` asks for the statement of `day` (YYYY-MM-DD) answer isp.bill_not_exist,
   * as Alipay does before it has generated a day's statement; 0 lifts the hold.
   */
  holdStatement(day: string, requests: number): void;
  /** The next `count` statement links (1 by default) are handed out already expired. */
  expireStatementLinks(count?: number): void;
  /** How long statement links handed out from now on work, in ms (Alipay's 30 s by default). */
  setStatementLinkLifetime(ms: number): void;
  /** How many alipay.fund.trans.uni.transfer requests named `outBizNo` (valid or not, any merchant). */
  transferRequests(outBizNo: string): number;
  /** The transfers made under `outBizNo` (one per merchant at most), as a query would see them now. */
  transfers(outBizNo: string): AlipaySandboxTransfer[];
  /**
   * Lets calls reach a trade made with `[sandbox:lost-until-released]` in its subject (by
   * out_trade_no or trade_no); its notification stays lost. False when there is no such trade.
   */
  release(tradeNo: string): boolean;
  /**
   * The app's gateway URL (应用网关), where Alipay posts its messages (the complaints' among them),
   * as an operator sets it in Alipay's console; undefined: none.
   */
  setGatewayUrl(url: string | undefined): void;
  /** A payer complains about a paid trade (by out_trade_no): the complaint, as Alipay keeps it. */
  openComplaint(outTradeNo: string, complaint?: OpenAlipayComplaint): AlipayComplaintRecord;
  /** A complaint as it stands now (its calls counted), or undefined. */
  complaint(complainEventId: string): AlipayComplaintRecord | undefined;
  /** The payer writes again. */
  payerReplies(complainEventId: string, text: string): void;
  /** The payer accepts the merchant's handling (FINISHED) or withdraws the complaint (CANCELLED). */
  payerEnds(complainEventId: string, how: 'FINISHED' | 'CANCELLED'): void;
}

const silentLogger: GatewayLogger = { info() {}, warn() {} };
/** An image of 10 MB and the rest of its form. */
const MAX_BODY_BYTES = 11 * 1024 * 1024;
const METHOD_NAME = /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+$/i;
const UNAVAILABLE = '[sandbox:unavailable]';
const LOST = '[sandbox:lost-until-released]';
/** The methods that make a trade: they reach a lost trade's gateway (it is the answers that get lost). */
const OPENING_METHODS: readonly string[] = [
  BARCODE_METHOD,
  'alipay.trade.precreate',
  'alipay.trade.create',
  'alipay.trade.app.pay',
  ...PAGE_METHODS,
];

export function createAlipaySandbox(options: AlipaySandboxOptions): AlipaySandbox {
  const logger = options.logger ?? silentLogger;
  const scale = options.timeScale ?? 1;
  const gateway = new AlipayGateway({
    keys: options.keys,
    base: options.publicBaseUrl.replace(/\/+$/, ''),
    scale,
    refundDelayMs: (options.refundDelayMs ?? 1000) * scale,
    logger,
    ...(options.background ? { background: options.background } : {}),
    appAuth: {
      ...(options.appAuthExpiresInSeconds === undefined
        ? {}
        : { expiresInSeconds: options.appAuthExpiresInSeconds }),
      ...(options.appAuthReExpiresInSeconds === undefined
        ? {}
        : { reExpiresInSeconds: options.appAuthReExpiresInSeconds }),
      ...(options.appAuthCodeTtlMs === undefined ? {} : { codeTtlMs: options.appAuthCodeTtlMs }),
    },
  });
  const royalty = new RoyaltyBook();
  const zft = new ZftBook();
  const statements = new StatementDesk();
  const barcodes = new BarcodeBook();
  const transfers = new TransferBook({
    failMs: options.transferDelaysMs?.failMs ?? 1000,
    slowMs: options.transferDelaysMs?.slowMs ?? 3000,
  });
  /** Lost trades a test released, by out_trade_no. */
  const released = new Set<string>();
  const appAuth = gateway.appAuth;
  const buyerAuth = new BuyerAuthBook(gateway.app.appId, BUYER_CODE_LIFETIME_MS);
  const complaints = new AlipayComplaintDesk(gateway);
  complaints.setGatewayUrl(options.gatewayUrl);
  const handlers: Record<string, Handler> = {
    ...tradeHandlers(gateway, royalty),
    ...barcodeHandlers(gateway, barcodes, (options.buyerConfirmMs ?? 1000) * scale),
    ...royaltyHandlers(gateway, royalty),
    ...zftHandlers(zft),
    ...appAuthHandlers(appAuth),
    ...buyerAuthHandlers(buyerAuth),
    ...transferHandlers(gateway, transfers),
    [BILL_METHOD]: statements.handler(gateway),
    ...complaints.handlers(),
  };
  const counts = new Map<string, number>();

  /** A signed answer under the method's key; error_response when there is no usable method. */
  function answer(res: Response, method: string | undefined, value: Record<string, unknown>): void {
    const key = method !== undefined && METHOD_NAME.test(method) ? responseKey(method) : 'error_response';
    res
      .status(200)
      .type('application/json; charset=utf-8')
      .send(signedAnswer(key, value, gateway.privateKey));
  }

  /** A request's parameters, counted and checked as the gateway does before any method runs. */
  function verifiedCall(request: GatewayRequest): Call {
    const method = request.params.method;
    if (method) counts.set(method, (counts.get(method) ?? 0) + 1);
    if (!method) throw missingArgument('isv.missing-method', '缺少方法名参数 method');
    if (request.conflict !== undefined) {
      throw invalidArgument('isv.invalid-parameter', `参数无效 ${request.conflict}: sent twice, differently`);
    }
    const call: Call = { method, params: request.params, files: request.files, now: Date.now() };
    checkCommonParams(call.params, gateway.app, call.now);
    if (call.params.biz_content?.includes(UNAVAILABLE)) {
      throw systemError(`系统繁忙 (fault injection: ${UNAVAILABLE})`);
    }
    return call;
  }

  /** The lost trade a call names, if it names one not released yet. */
  function lostTrade(call: Call): TradeRecord | undefined {
    if (OPENING_METHODS.includes(call.method)) return undefined;
    let biz: Record<string, unknown>;
    try {
      biz = parseBizContent(call.params);
    } catch {
      return undefined;
    }
    const trade =
      typeof biz.trade_no === 'string'
        ? gateway.trades.peekByTradeNo(biz.trade_no)
        : typeof biz.out_trade_no === 'string'
          ? gateway.trades.peek(biz.out_trade_no)
          : undefined;
    return trade && trade.order.subject.includes(LOST) && !released.has(trade.order.out_trade_no)
      ? trade
      : undefined;
  }

  /** A business refusal is routine (a poller asking for a trade not yet made); the others are not. */
  function refused(req: Request, err: AlipayError): void {
    const meta = { path: req.path, code: err.code, sub_code: err.subCode };
    if (err.code === '40004') logger.info('alipay sandbox request refused', meta);
    else logger.warn('alipay sandbox request refused', meta);
  }

  const router = express.Router({ caseSensitive: true });
  // Its own bodies, as sent: the signature covers the decoded parameters of exactly these bytes.
  router.use(readRawBody({ limit: MAX_BODY_BYTES }));

  router.all('/gateway.do', async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'POST') {
      res.status(405).set('Allow', 'GET, POST').end();
      return;
    }
    let method: string | undefined;
    try {
      const request = await readGatewayRequest(req, false);
      method = request.params.method;
      const call = verifiedCall(request);
      if (PAGE_METHODS.includes(call.method)) {
        // The buyer's browser, sent by the merchant's page: the trade exists from this visit on.
        const { trade } = openPaymentTrade(gateway, call.method as PayMethod, call);
        res.set('Cache-Control', 'no-store').redirect(302, gateway.cashierUrl(trade));
        return;
      }
      const lost = lostTrade(call);
      if (lost) {
        logger.info('alipay sandbox call dropped (fault injection: lost until released)', {
          method: call.method,
          out_trade_no: lost.order.out_trade_no,
        });
        req.socket.destroy();
        return;
      }
      const handler = Object.hasOwn(handlers, call.method) ? handlers[call.method] : undefined;
      if (!handler) throw invalidArgument('isv.invalid-method', `不存在的方法名: ${call.method}`);
      answer(res, call.method, success(await handler(call)));
    } catch (err) {
      if (err instanceof DroppedAnswer) {
        logger.info('alipay sandbox answer dropped (fault injection)', { method, reason: err.message });
        req.socket.destroy();
        return;
      }
      if (!(err instanceof AlipayError)) throw err;
      refused(req, err);
      // A body that could not be read still names its method in the query string.
      method ??= new URL(req.originalUrl, 'http://gateway.invalid').searchParams.get('method') ?? undefined;
      if (method !== undefined && PAGE_METHODS.includes(method)) {
        res
          .status(400)
          .set('Content-Security-Policy', CASHIER_CSP)
          .type('html')
          .send(errorPage(err.code, err.subCode, err.subMsg));
        return;
      }
      answer(res, method, err.body());
    }
  });

  // The Alipay app submitting an order string the merchant's server made (sdkExecute).
  router.post('/app-pay', async (req, res) => {
    try {
      const call = verifiedCall(await readGatewayRequest(req, true));
      if (call.method !== 'alipay.trade.app.pay') {
        throw invalidArgument('isv.invalid-method', `不存在的方法名: ${call.method} is not an app payment`);
      }
      const { trade } = openPaymentTrade(gateway, 'alipay.trade.app.pay', call);
      res.json({
        cashier_url: gateway.cashierUrl(trade),
        out_trade_no: trade.order.out_trade_no,
        trade_no: trade.tradeNo,
      });
    } catch (err) {
      if (!(err instanceof AlipayError)) throw err;
      refused(req, err);
      res.status(400).json(err.body());
    }
  });

  /** A trade the cashier pays; a barcode trade has none (its buyer confirms in the wallet). */
  function cashierTrade(req: Request): TradeRecord | undefined {
    const trade = gateway.trades.peekByTradeNo(String(req.params.tradeNo));
    return trade && trade.method !== BARCODE_METHOD ? gateway.touch(trade, Date.now()) : undefined;
  }

  router.get('/cashier/:tradeNo', (req, res) => {
    res.set('Content-Security-Policy', CASHIER_CSP).set('Cache-Control', 'no-store');
    const trade = cashierTrade(req);
    if (!trade) {
      res.status(404).type('html').send(notFoundPage());
      return;
    }
    // Opening the cashier is the buyer scanning the code.
    gateway.scan(trade, Date.now());
    res.type('html').send(
      cashierPage({
        subject: trade.order.subject,
        totalAmount: yuan(trade.totalFen),
        outTradeNo: trade.order.out_trade_no,
        tradeNo: trade.tradeNo,
        method: trade.method,
        tradeStatus: trade.status,
        payable: trade.status === 'WAIT_BUYER_PAY',
        returnLink: gateway.returnLink(trade, Date.now()),
      }),
    );
  });

  /** The buyer's choice; a form from the page goes back to a page, a script gets JSON. */
  router.post('/cashier/:tradeNo', (req, res) => {
    res.set('Cache-Control', 'no-store');
    const trade = cashierTrade(req);
    if (!trade) {
      res.status(404).json({ error: 'TRADE_NOT_EXIST', message: 'no such trade_no' });
      return;
    }
    const { body, fromPage } = pageOrScriptBody(req);
    const result = (body as { result?: unknown } | undefined)?.result;
    if (result !== 'success' && result !== 'fail') {
      res.status(400).json({ error: 'INVALID_PARAMETER', message: 'result is "success" or "fail"' });
      return;
    }
    const now = Date.now();
    const refusal =
      trade.status === 'TRADE_CLOSED'
        ? 'the trade is closed (closed, expired or refunded in full)'
        : result === 'fail' && trade.status !== 'WAIT_BUYER_PAY'
          ? 'the trade is paid'
          : undefined;
    if (refusal === undefined) {
      gateway.scan(trade, now);
      if (result === 'success') gateway.pay(trade, now);
    }
    if (fromPage) {
      res.redirect(303, (refusal === undefined && gateway.returnLink(trade, now)) || req.originalUrl);
      return;
    }
    if (refusal !== undefined) {
      res.status(409).json({ error: 'TRADE_STATUS_ERROR', message: refusal, trade_status: trade.status });
      return;
    }
    const back = gateway.returnLink(trade, now);
    res.json({
      trade_status: trade.status,
      out_trade_no: trade.order.out_trade_no,
      trade_no: trade.tradeNo,
      ...(back === undefined ? {} : { return_url: back }),
    });
  });

  appAuthPageRoutes(router, appAuth);
  buyerAuthRoutes(router, gateway, buyerAuth, options.publicBaseUrl.replace(/\/+$/, ''));

  // A statement link: the zip while it works; after its 30 seconds, Alipay's page saying so.
  router.get(BILL_DOWNLOAD_PATH, (req, res) => {
    res.set('Cache-Control', 'no-store');
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const link = statements.download(token, Date.now());
    if (link === undefined) {
      res.status(404).json({ error: 'NOT_FOUND', message: 'no such statement link' });
      return;
    }
    if (link === 'expired') {
      const page = '<html><head><meta charset="GBK"></head><body>下载超时，请重新下载</body></html>';
      res.type('text/html; charset=GBK').send(iconv.encode(page, 'gbk'));
      return;
    }
    res
      .type('application/zip')
      .set('Content-Disposition', `attachment; filename="${link.fileName}"`)
      .send(link.zip);
  });

  // A complaint's image, where Alipay's answers point.
  router.get(`${COMPLAINT_IMAGE_PATH}/:imageId`, (req, res) => {
    const image = complaints.image(String(req.params.imageId));
    if (!image) {
      res.status(404).json({ error: 'NOT_FOUND', message: 'no such image' });
      return;
    }
    res.type(image.type).set('Cache-Control', 'no-store').send(image.bytes);
  });

  router.use((req: Request, res: Response) => {
    res.status(404).json({ error: 'NOT_FOUND', message: `no such path: ${req.method} ${req.path}` });
  });

  const errors: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    const method = new URL(req.originalUrl, 'http://gateway.invalid').searchParams.get('method') ?? undefined;
    // body-parser's own errors (too large, aborted) carry a 4xx status and a safe message.
    const status = typeof err === 'object' && err !== null ? (err as { status?: unknown }).status : undefined;
    const failure =
      typeof status === 'number' && status >= 400 && status < 500
        ? invalidArgument('isv.invalid-parameter', err instanceof Error ? err.message : String(err))
        : systemError('系统繁忙');
    logger.warn('alipay sandbox request failed', {
      path: req.path,
      error: err instanceof Error ? err.message : String(err),
    });
    answer(res, method, failure.body());
  };
  router.use(errors);

  return {
    router,
    idle: (outTradeNo) => gateway.scheduler.idle(outTradeNo),
    close: () => gateway.stop(),
    trades: () => [...gateway.trades.all()].map((t) => tradeSnapshot(gateway.touch(t, Date.now()))),
    trade(outTradeNo) {
      const trade = gateway.trades.peek(outTradeNo);
      return trade && tradeSnapshot(gateway.touch(trade, Date.now()));
    },
    notifications: (outTradeNo) => gateway.notifier.history(outTradeNo),
    settlements: (tradeNo) => royalty.settlementsOf(tradeNo, Date.now(), gateway.options.refundDelayMs),
    relations: () => royalty.listRelations(),
    royaltyReturns: (tradeNo) => royalty.returnsOf(tradeNo),
    royaltyUnfreeze: (tradeNo) => royalty.unfreezeOf(tradeNo),
    zftOrder: (externalId) => zft.peek(externalId),
    requests: (method) => counts.get(method) ?? 0,
    barcodeRequests: (outTradeNo) => barcodes.requests(outTradeNo),
    mintAppAuthToken: (grant) => appAuth.mint(grant),
    setAppAuthLifetimes: (lifetimes) => appAuth.setLifetimes(lifetimes),
    expireAppAuth: (value) => appAuth.expire(value, Date.now()),
    appAuth: (value) => appAuth.peek(value),
    holdStatement: (day, requests) => statements.hold(day, requests),
    expireStatementLinks: (count) => statements.expireNextLinks(count),
    setStatementLinkLifetime: (ms) => statements.setLinkLifetime(ms),
    transferRequests: (outBizNo) => transfers.requests(outBizNo),
    transfers: (outBizNo) => transfers.all(outBizNo, Date.now()).map(transferSnapshot),
    release(tradeNo) {
      const trade = gateway.trades.peek(tradeNo) ?? gateway.trades.peekByTradeNo(tradeNo);
      if (!trade || !trade.order.subject.includes(LOST)) return false;
      released.add(trade.order.out_trade_no);
      return true;
    },
    setGatewayUrl: (url) => complaints.setGatewayUrl(url),
    openComplaint(outTradeNo, complaint) {
      const trade = gateway.trades.peek(outTradeNo);
      if (!trade) throw new Error(`no trade ${outTradeNo}`);
      return complaints.open(gateway.touch(trade, Date.now()), complaint);
    },
    complaint: (id) => complaints.find(id),
    payerReplies(id, text) {
      const c = complaints.find(id);
      if (!c) throw new Error(`no complaint ${id}`);
      complaints.payerReplies(c, text);
    },
    payerEnds(id, how) {
      const c = complaints.find(id);
      if (!c) throw new Error(`no complaint ${id}`);
      complaints.payerEnds(c, how);
    },
  };
}
