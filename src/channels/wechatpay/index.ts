// Longer than 300 lines: the adapter for every port WeChat Pay offers and its transport in the
// one file the registry line names, as for the sandbox; wire types and state mapping are in
// transformers.ts, callback crypto and client signing in signature.ts.
/**
 * The WeChat Pay API v3 channel (`channel_code: "wechatpay"`), as a service provider (服务商):
 * every call carries sp_mchid and the merchant's sub_mchid. The wire is wechatpay-axios-plugin's
 * (request signing, response verification); this adapter maps durapay's ports onto the partner
 * APIs, with wire types and state mapping in transformers.ts and callback crypto in
 * signature.ts; onboarding's body and states are in applyment.ts.
 */
import { createHash, type KeyObject } from 'node:crypto';
import axios, { isAxiosError, type AxiosInstance, type InternalAxiosRequestConfig } from 'axios';
import { Decorator, Formatter, Multipart, Rsa } from 'wechatpay-axios-plugin';
import { WECHATPAY_SETTINGS, wechatpayConfig, type WechatpayConfig } from './config';
import { qrImage } from '../../platform/qr';
import { outboundHttpSpan } from '../../platform/spans';
import { ChannelError } from '../errors';
import type {
  CallbackCheck,
  CallbackReply,
  CallbackRequest,
  CallbacksPort,
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ChannelEvent,
  ApplicationState,
  OnboardingPort,
  PaymentState,
  PaymentsPort,
  ProfitSharingPort,
  RefundsPort,
} from '../ports';
import { referenceOf, type ChannelDescriptor, type ChannelFactory } from '../ports';
import { PlatformKeyring, type CertificatesAnswer } from './certificates';
import { applymentStateOf, checkApplyment, mediaMeta, submittedStateOf, toWireApplyment } from './applyment';
import {
  appPayParams,
  decryptResource,
  jsapiPayParams,
  MAX_CLOCK_SKEW_S,
  privateKeyFrom,
  publicKeyFrom,
  verifyWechatpaySignature,
} from './signature';
import {
  CREATE_KIND,
  eventOf,
  parseCreated,
  parseNotification,
  parseTransaction,
  paymentStateOf,
  receiverType,
  sharingStateOf,
  refundStateOf,
  returnStateOf,
  toWireAbnormalRefund,
  toWireCreate,
  toWireRefund,
  WECHATPAY_PAY_METHODS,
} from './transformers';

export interface WechatpayChannelOptions extends WechatpayConfig {
  /** How long one call may wait without receiving anything (axios' idle timeout, not a deadline). */
  timeoutMs: number;
  /** Platform-certificate mode: the shortest gap between downloads an unknown serial asks for (1 min). */
  certificateRefreshGapMs?: number;
}

/**
 * WeChat Pay's `amount.total` is a 32-bit int: 2^31 − 1 fen is the most one order can be, and
 * above it WeChat Pay refuses the create with PARAM_ERROR. Checked when the order is validated
 * (SPEC §1: 400 invalid_amount), so that it never reaches the channel.
 */
export const WECHATPAY_MAX_AMOUNT_FEN = 2 ** 31 - 1;

export const WECHATPAY_CAPABILITIES: ChannelCapabilities = {
  payMethods: WECHATPAY_PAY_METHODS,
  maxAmount: WECHATPAY_MAX_AMOUNT_FEN,
  currency: 'CNY',
};

/** Refusals of a return that are WeChat Pay's answer about the return itself, not about the request. */
const RETURN_REFUSALS = /^(INVALID_REQUEST|NO_AUTH|NOT_ENOUGH):/;

interface CallOptions {
  /** The query string. */
  params?: Record<string, string>;
  /** A 404 with this code answers undefined: the object is unknown. */
  notFoundCode?: string;
  headers?: Record<string, string>;
  /** A media upload's `meta`, the part of a multipart body the request signature covers. */
  meta?: Record<string, string>;
}

interface WireError {
  code?: string;
  message?: string;
}

function header(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

export class WechatpayChannel implements Channel {
  readonly code = 'wechatpay';
  readonly capabilities = WECHATPAY_CAPABILITIES;
  private readonly merchantKey: KeyObject;
  private readonly keyring: PlatformKeyring;
  /** The client, made again whenever the set of platform keys it verifies answers with changes. */
  private http: { instance: AxiosInstance; serials: string } | undefined;

  constructor(private readonly options: WechatpayChannelOptions) {
    this.merchantKey = privateKeyFrom(options.merchantPrivateKey);
    this.keyring = new PlatformKeyring({
      apiV3Key: options.apiV3Key,
      ...(options.publicKeyId && options.publicKey
        ? { publicKey: { id: options.publicKeyId, key: publicKeyFrom(options.publicKey) } }
        : {}),
      ...(options.platformCertificates ? { download: () => this.downloadCertificates() } : {}),
      ...(options.certificateRefreshGapMs === undefined
        ? {}
        : { minRefreshGapMs: options.certificateRefreshGapMs }),
    });
  }

  /** The library's signing settings (its declared type omits axios' own, which it passes on). */
  private get signing() {
    return {
      mchid: this.options.spMchid,
      serial: this.options.merchantSerial,
      privateKey: this.merchantKey,
      baseURL: `${this.options.baseUrl}/`,
      timeout: this.options.timeoutMs,
    };
  }

  /** The library's client, verifying answers with every platform key trusted now. */
  private async client(): Promise<AxiosInstance> {
    const keys = await this.keyring.keys();
    const serials = [...keys.keys()].sort().join(',');
    if (this.http?.serials !== serials) {
      this.http = {
        instance: Decorator.jsonBased({ ...this.signing, certs: Object.fromEntries(keys) }),
        serials,
      };
    }
    return this.http.instance;
  }

  /**
   * `GET /v3/certificates`, signed by the library's own request signer, its answer returned
   * unverified as exact text: PlatformKeyring checks it, since no key is trusted before it.
   */
  private async downloadCertificates(): Promise<CertificatesAnswer> {
    const http = axios.create({
      ...this.signing,
      responseType: 'text',
      transformResponse: [(data: unknown) => data],
      validateStatus: () => true,
    });
    http.interceptors.request.use(
      Decorator.requestInterceptor() as (config: InternalAxiosRequestConfig) => InternalAxiosRequestConfig,
    );
    try {
      const res = await outboundHttpSpan(
        { method: 'GET', url: `${this.options.baseUrl}/v3/certificates` },
        () => http.get<string>('v3/certificates'),
        httpStatusOf,
      );
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (typeof value === 'string') headers[name.toLowerCase()] = value;
      }
      return { status: res.status, headers, body: typeof res.data === 'string' ? res.data : '' };
    } catch (err) {
      throw new ChannelError(
        'unreachable',
        `WeChat Pay unreachable for the platform certificates: ${isAxiosError(err) ? (err.code ?? err.message) : String(err)}`,
      );
    }
  }

  readonly payments: PaymentsPort = {
    create: async (ctx, input) => {
      const kind = CREATE_KIND[input.payMethod];
      if (!kind) throw new ChannelError('not_supported', `WeChat Pay does not support ${input.payMethod}`);
      const body = toWireCreate(this.account, this.subMchid(ctx), input);
      const created = parseCreated(
        await this.call('create order', 'POST', `v3/pay/partner/transactions/${kind}`, body),
      );
      // The app the buyer's openid belongs to signs the JSAPI call; an app payment is the sub-merchant's app when it has one.
      const appId =
        'payer' in body && body.payer && 'sp_openid' in body.payer
          ? body.sp_appid
          : (body.sub_appid ?? body.sp_appid);
      const signing = { timeStamp: String(Formatter.timestamp()), nonceStr: Formatter.nonce() };
      switch (kind) {
        case 'native': {
          const codeUrl = this.field(created.code_url, 'code_url');
          return {
            channelTradeNo: null,
            payCredential: { code_url: codeUrl, qr_image: await qrImage(codeUrl) },
          };
        }
        case 'h5':
          return { channelTradeNo: null, payCredential: { h5_url: this.field(created.h5_url, 'h5_url') } };
        case 'jsapi': {
          const prepayId = this.field(created.prepay_id, 'prepay_id');
          return {
            channelTradeNo: null,
            payCredential: { ...jsapiPayParams({ appId, prepayId, ...signing }, this.merchantKey) },
          };
        }
        case 'app': {
          const prepayId = this.field(created.prepay_id, 'prepay_id');
          const params = appPayParams(
            { appId, partnerId: this.options.spMchid, prepayId, ...signing },
            this.merchantKey,
          );
          return { channelTradeNo: null, payCredential: { ...params } };
        }
      }
    },
    query: async (ctx, tradeNo) => {
      const answer = await this.call(
        'query order',
        'GET',
        `v3/pay/partner/transactions/out-trade-no/${encodeURIComponent(tradeNo)}`,
        undefined,
        {
          params: { sp_mchid: this.options.spMchid, sub_mchid: this.subMchid(ctx) },
          notFoundCode: 'ORDER_NOT_EXIST',
        },
      );
      return answer === undefined ? { status: 'not_found' } : paymentStateOf(parseTransaction(answer));
    },
    close: async (ctx, tradeNo): Promise<PaymentState> => {
      try {
        await this.call(
          'close order',
          'POST',
          `v3/pay/partner/transactions/out-trade-no/${encodeURIComponent(tradeNo)}/close`,
          { sp_mchid: this.options.spMchid, sub_mchid: this.subMchid(ctx) },
        );
      } catch (err) {
        // Paid first (ORDERPAID) or closed already (ORDER_CLOSED, a retried close): the query
        // below says which, with the payment when there is one.
        if (!(err instanceof ChannelError && /^(ORDERPAID|ORDER_CLOSED):/.test(err.message))) throw err;
      }
      // A 204 is not proof: a payment that landed just before the close shows in the query.
      const state = await this.payments.query(ctx, tradeNo);
      return state.status === 'pending' ? { status: 'closed' } : state;
    },
  };

  readonly refunds: RefundsPort = {
    refund: async (ctx, input) => {
      try {
        return refundStateOf(
          await this.call(
            'create refund',
            'POST',
            'v3/refund/domestic/refunds',
            toWireRefund(this.subMchid(ctx), input),
          ),
        );
      } catch (err) {
        // No trustworthy answer (no answer, a 5xx, an answer that failed verification): WeChat
        // Pay may have taken the refund. Ask for it by out_refund_no before saying it failed.
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await this.refunds.query(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    query: async (ctx, { refundNo }) => {
      const answer = await this.call(
        'query refund',
        'GET',
        `v3/refund/domestic/refunds/${encodeURIComponent(refundNo)}`,
        undefined,
        { params: { sub_mchid: this.subMchid(ctx) }, notFoundCode: 'RESOURCE_NOT_EXISTS' },
      );
      return answer === undefined ? { status: 'not_found' } : refundStateOf(answer);
    },
    /**
     * 发起异常退款: an ABNORMAL refund paid to a bank card instead, the card number and the
     * holder's name sealed with WeChat Pay's public key (never logged, never in an error).
     * WeChat Pay then takes it PROCESSING and on to SUCCESS, with a REFUND.SUCCESS callback.
     */
    applyAbnormal: async (ctx, input) => {
      const subMchid = this.subMchid(ctx);
      const sealer = input.method === 'user_bank_card' ? await this.keyring.sealer() : undefined;
      const body = toWireAbnormalRefund(subMchid, input, (plain) => {
        if (!sealer) throw new ChannelError('refused', 'no WeChat Pay public key to seal the card with');
        return Rsa.encrypt(plain, sealer.key);
      });
      try {
        return refundStateOf(
          await this.call(
            'apply abnormal refund',
            'POST',
            `v3/refund/domestic/refunds/${encodeURIComponent(input.channelRefundNo)}/apply-abnormal-refund`,
            body,
            sealer ? { headers: { 'Wechatpay-Serial': sealer.serial } } : {},
          ),
        );
      } catch (err) {
        // No trustworthy answer, or asked again for a refund already under way: where it stands.
        if (!(err instanceof ChannelError)) throw err;
        if (err.kind === 'refused' && !err.message.startsWith('INVALID_REQUEST:')) throw err;
        const found = await this.refunds.query(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found' || found.status === 'abnormal') throw err;
        return found;
      }
    },
  };

  /**
   * Partner profit sharing: receivers are added to the sub-merchant first (a merchant
   * receiver's name encrypted with WeChat Pay's public key), then one sharing order per
   * durapay share, on the payment's transaction_id, with the rest unfrozen when it finishes.
   */
  readonly profitSharing: ProfitSharingPort = {
    registerReceivers: async (ctx, receivers) => {
      const subMchid = this.subMchid(ctx);
      for (const r of receivers) {
        const type = receiverType(r.type);
        if (type === 'MERCHANT_ID' && !r.name) {
          throw new ChannelError('refused', `WeChat Pay needs the name of merchant receiver ${r.account}`);
        }
        const sealer = r.name ? await this.keyring.sealer() : undefined;
        await this.call(
          'add profit sharing receiver',
          'POST',
          'v3/profitsharing/receivers/add',
          {
            sub_mchid: subMchid,
            appid: this.options.spAppid,
            type,
            account: r.account,
            ...(r.name && sealer ? { name: Rsa.encrypt(r.name, sealer.key) } : {}),
            relation_type: 'PARTNER',
          },
          sealer ? { headers: { 'Wechatpay-Serial': sealer.serial } } : {},
        );
      }
    },
    share: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError('refused', `order ${input.tradeNo} has no WeChat Pay transaction_id to share`);
      }
      const answer = await this.call('create profit sharing order', 'POST', 'v3/profitsharing/orders', {
        sub_mchid: this.subMchid(ctx),
        appid: this.options.spAppid,
        transaction_id: ctx.channelTradeNo,
        out_order_no: input.shareNo,
        receivers: input.receivers.map((r) => ({
          type: receiverType(r.type),
          account: r.account,
          amount: r.amount,
          description: `profit sharing of ${input.tradeNo}`,
        })),
        unfreeze_unsplit: true,
      });
      return sharingStateOf(answer);
    },
    query: async (ctx, { shareNo }) => {
      if (!ctx.channelTradeNo) return { status: 'not_found' };
      const answer = await this.call(
        'query profit sharing order',
        'GET',
        `v3/profitsharing/orders/${encodeURIComponent(shareNo)}`,
        undefined,
        {
          params: { sub_mchid: this.subMchid(ctx), transaction_id: ctx.channelTradeNo },
          notFoundCode: 'RESOURCE_NOT_EXISTS',
        },
      );
      return answer === undefined ? { status: 'not_found' } : sharingStateOf(answer);
    },
    /**
     * 解冻剩余资金: the whole frozen payment back to the sub-merchant when nothing is shared. The
     * unfreeze is a sharing order of its own (out_order_no = unfreezeNo): WeChat Pay may answer it
     * PROCESSING, and `query` with shareNo = unfreezeNo follows it to FINISHED.
     */
    unfreeze: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError(
          'refused',
          `order ${input.tradeNo} has no WeChat Pay transaction_id to unfreeze`,
        );
      }
      const ref = { tradeNo: input.tradeNo, shareNo: input.unfreezeNo };
      try {
        const answer = await this.call(
          'unfreeze profit sharing',
          'POST',
          'v3/profitsharing/orders/unfreeze',
          {
            sub_mchid: this.subMchid(ctx),
            transaction_id: ctx.channelTradeNo,
            out_order_no: input.unfreezeNo,
            description: [...input.description].slice(0, 80).join(''),
          },
        );
        return sharingStateOf(answer);
      } catch (err) {
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await this.profitSharing.query!(ctx, ref).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    // 分账回退: from merchant receivers only; WeChat Pay cannot take a share back from an openid.
    returns: 'separate',
    returnable: (receiver) => {
      try {
        return receiverType(receiver.type) === 'MERCHANT_ID';
      } catch {
        return false;
      }
    },
    returnShare: async (ctx, input) => {
      if (!this.profitSharing.returnable!(input.receiver)) {
        return {
          status: 'failed',
          reason: `WeChat Pay takes a share back from merchant receivers only, not ${input.receiver.type} ${input.receiver.account}`,
        };
      }
      try {
        return returnStateOf(
          await this.call('return profit share', 'POST', 'v3/profitsharing/return-orders', {
            sub_mchid: this.subMchid(ctx),
            out_order_no: input.shareNo,
            out_return_no: input.returnNo,
            return_mchid: input.receiver.account,
            amount: input.amount,
            description: [...input.description].slice(0, 80).join(''),
          }),
        );
      } catch (err) {
        if (!(err instanceof ChannelError)) throw err;
        // WeChat Pay's no to this return (more than the receiver has left, a receiver that does
        // not allow returns): the return failed, and asking again would not change that.
        if (err.kind === 'refused' && RETURN_REFUSALS.test(err.message)) {
          return { status: 'failed', reason: err.message };
        }
        if (err.kind === 'refused') throw err;
        // No trustworthy answer: WeChat Pay may have taken it. Ask before saying it is unknown.
        const found = await this.profitSharing.queryReturn!(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    queryReturn: async (ctx, { shareNo, returnNo }) => {
      const answer = await this.call(
        'query profit share return',
        'GET',
        `v3/profitsharing/return-orders/${encodeURIComponent(returnNo)}`,
        undefined,
        {
          params: { sub_mchid: this.subMchid(ctx), out_order_no: shareNo },
          notFoundCode: 'RESOURCE_NOT_EXISTS',
        },
      );
      return answer === undefined ? { status: 'not_found' } : returnStateOf(answer);
    },
  };

  /**
   * Onboarding a sub-merchant (applyment4sub): images uploaded as media, the applyment submitted
   * with durapay's application_id as its business_code and its sensitive fields sealed, then
   * followed by business_code until it is FINISHED with the merchant's sub_mchid.
   */
  readonly onboarding: OnboardingPort = {
    problemWith: (input) => {
      try {
        checkApplyment({ ...input, applicationId: '' });
        return undefined;
      } catch (err) {
        return err instanceof ChannelError ? err.message : String(err);
      }
    },
    uploadFile: async (_ctx, input) => {
      const meta = mediaMeta(input, createHash('sha256').update(input.content).digest('hex'));
      const form = new Multipart()
        .append('meta', JSON.stringify(meta))
        .append('file', input.content, meta.filename);
      const answer = await this.call('upload media', 'POST', 'v3/merchant/media/upload', form.getBuffer(), {
        headers: form.getHeaders() as Record<string, string>,
        meta,
      });
      const mediaId = (answer as { media_id?: unknown } | undefined)?.media_id;
      if (typeof mediaId !== 'string' || mediaId === '') {
        throw new ChannelError('invalid_response', 'WeChat Pay media upload answered without media_id');
      }
      return { fileId: mediaId };
    },
    submit: async (_ctx, input): Promise<ApplicationState> => {
      const sealer = await this.keyring.sealer();
      const body = toWireApplyment(input, (plain) => Rsa.encrypt(plain, sealer.key));
      // A retried submit finds the applyment its first try made, by business_code.
      const earlier = await this.findApplyment(input.applicationId);
      if (earlier) return earlier;
      try {
        return submittedStateOf(
          await this.call('submit applyment', 'POST', 'v3/applyment4sub/applyment/', body, {
            headers: { 'Wechatpay-Serial': sealer.serial },
          }),
        );
      } catch (err) {
        // No trustworthy answer: WeChat Pay may have taken it. Look before saying it failed.
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await this.findApplyment(input.applicationId).catch(() => undefined);
        if (!found) throw err;
        return found;
      }
    },
    query: async (_ctx, applicationId): Promise<ApplicationState> => {
      const found = await this.findApplyment(applicationId);
      if (!found) {
        throw new ChannelError('refused', `WeChat Pay has no applyment with business_code ${applicationId}`);
      }
      return found;
    },
  };

  readonly callbacks: CallbacksPort = {
    // A notification is a small JSON envelope around one encrypted resource: a few KiB at most.
    maxBodyBytes: 64 * 1024,
    verify: (req: CallbackRequest): Promise<CallbackCheck> => this.verifyCallback(req),
    decode: async (req: CallbackRequest): Promise<ChannelEvent> => {
      let body: unknown;
      try {
        body = JSON.parse(req.rawBody.toString('utf8'));
      } catch {
        throw new ChannelError('invalid_response', 'WeChat Pay notification is not JSON');
      }
      const notification = parseNotification(body);
      let plaintext: unknown;
      try {
        plaintext = JSON.parse(decryptResource(notification.resource, this.options.apiV3Key));
      } catch {
        throw new ChannelError(
          'invalid_response',
          'WeChat Pay notification resource does not decrypt with the APIv3 key',
        );
      }
      const { event, spMchid, subMchid } = eventOf(notification, plaintext);
      if (spMchid !== this.options.spMchid) {
        throw new ChannelError('invalid_response', `notification for sp_mchid ${spMchid}, not this account`);
      }
      // The order's merchant is compared with it by the callback route, which knows the order.
      return subMchid === undefined ? event : { ...event, subMerchantNo: subMchid };
    },
    identify: referenceOf,
    // SPEC §4: 200 text/plain, the v3 acknowledgement on success and `fail` on any failure.
    // WeChat Pay takes any 200 as received, so a refused callback is not sent again: the
    // order's polling (§3.2, §3.5) is what finds a result whose callback was refused.
    reply: (outcome): CallbackReply => ({
      status: 200,
      contentType: 'text/plain',
      body: outcome.ok ? JSON.stringify({ code: 'SUCCESS', message: '成功' }) : 'fail',
    }),
  };

  /** The applyment of a business_code, or undefined when WeChat Pay has none. */
  private async findApplyment(businessCode: string): Promise<ApplicationState | undefined> {
    const answer = await this.call(
      'query applyment',
      'GET',
      `v3/applyment4sub/applyment/business_code/${encodeURIComponent(businessCode)}`,
      undefined,
      { notFoundCode: 'RESOURCE_NOT_EXISTS' },
    );
    return answer === undefined ? undefined : applymentStateOf(answer);
  }

  private get account() {
    return { spMchid: this.options.spMchid, spAppid: this.options.spAppid };
  }

  /** The sub-merchant every partner API call names: the order's merchant, onboarded at WeChat Pay. */
  private subMchid(ctx: ChannelContext): string {
    if (!ctx.subMerchantNo) {
      throw new ChannelError(
        'refused',
        'WeChat Pay needs the sub_mchid of an onboarded merchant: create the order with a merchant_id whose merchant is active at WeChat Pay',
      );
    }
    return ctx.subMerchantNo;
  }

  private field(value: string | undefined, name: string): string {
    if (!value) throw new ChannelError('invalid_response', `WeChat Pay answer without ${name}`);
    return value;
  }

  private async verifyCallback(req: CallbackRequest): Promise<CallbackCheck> {
    const serial = header(req.headers, 'wechatpay-serial');
    const timestamp = header(req.headers, 'wechatpay-timestamp');
    const nonce = header(req.headers, 'wechatpay-nonce');
    const signature = header(req.headers, 'wechatpay-signature');
    if (!serial || !timestamp || !nonce || !signature) {
      return { ok: false, reason: 'missing Wechatpay-Serial, -Timestamp, -Nonce or -Signature' };
    }
    // The timestamp first: a stale or junk callback must not make durapay download certificates.
    if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_CLOCK_SKEW_S) {
      return { ok: false, reason: 'Wechatpay-Timestamp outside the tolerance' };
    }
    const key = await this.keyring.find(serial).catch(() => undefined);
    if (!key) return { ok: false, reason: `unknown Wechatpay-Serial ${serial}` };
    const body = req.rawBody.toString('utf8');
    return verifyWechatpaySignature({ timestamp, nonce, body, signature }, key)
      ? { ok: true }
      : { ok: false, reason: 'Wechatpay-Signature does not match' };
  }

  /**
   * One v3 call. Answers the parsed body; undefined for a 404 with `notFoundCode` (the object
   * is unknown). 4xx is a refusal (`CODE: message`), 5xx, 429 or no connection "unreachable",
   * no answer in time "timeout", an answer whose signature fails "invalid_response".
   */
  private async call(
    what: string,
    method: 'GET' | 'POST',
    url: string,
    data?: unknown,
    options: CallOptions = {},
  ): Promise<unknown> {
    const { params, notFoundCode, headers, meta } = options;
    try {
      // `meta` is what a multipart upload is signed over (the library's request interceptor reads it).
      const config = { method, url, data, params, headers, ...(meta ? { meta } : {}) };
      const client = await this.client();
      // By hand: axios goes through Node's http module, whose instrumentation is a require hook.
      const res = await outboundHttpSpan(
        { method, url: `${this.options.baseUrl}/${url}` },
        () => client.request(config),
        httpStatusOf,
      );
      return res.data;
    } catch (err) {
      if (!isAxiosError(err)) throw err;
      // A 2xx whose signature, serial or timestamp failed: WeChat Pay may have done what was
      // asked, so this is not a refusal; the caller retries (every call is idempotent).
      if (err.code?.startsWith('EV3_')) {
        // Perhaps signed by a platform certificate durapay has not fetched yet.
        this.keyring.markStale();
        throw new ChannelError(
          'unreachable',
          `WeChat Pay ${what}: the answer failed verification (${err.code})`,
        );
      }
      const res = err.response;
      if (!res) {
        if (err.code === 'ECONNABORTED' || err.code === 'ETIMEDOUT') {
          throw new ChannelError(
            'timeout',
            `WeChat Pay gave no answer to ${what} within ${this.options.timeoutMs} ms`,
          );
        }
        throw new ChannelError(
          'unreachable',
          `WeChat Pay unreachable for ${what}: ${err.code ?? err.message}`,
        );
      }
      const body = (typeof res.data === 'object' && res.data !== null ? res.data : {}) as WireError;
      const code = typeof body.code === 'string' ? body.code : `HTTP_${res.status}`;
      const message = typeof body.message === 'string' ? body.message : '';
      if (res.status === 404 && notFoundCode !== undefined && code === notFoundCode) return undefined;
      if (res.status >= 400 && res.status < 500 && res.status !== 429) {
        throw new ChannelError('refused', `${code}: ${message}`.trim());
      }
      throw new ChannelError('unreachable', `WeChat Pay could not ${what}: ${code} ${message}`.trim());
    }
  }
}

/** The HTTP status of an axios answer, or of the answer an axios error carries. */
function httpStatusOf(resultOrError: unknown): number | undefined {
  if (isAxiosError(resultOrError)) return resultOrError.response?.status;
  const status = (resultOrError as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The WeChat Pay adapters of named accounts (one service-provider account each). */
export function wechatpayChannelFactory(accounts: Record<string, WechatpayChannelOptions>): ChannelFactory {
  return {
    code: 'wechatpay',
    accounts: Object.keys(accounts),
    create: (account) => new WechatpayChannel(accounts[account]!),
  };
}

/** WeChat Pay: its settings are WECHATPAY_* (./config.ts), read into the configuration's `wechatpay`. */
export const wechatpayChannel: ChannelDescriptor<'wechatpay', WechatpayConfig> = {
  code: 'wechatpay',
  label: 'WeChat Pay',
  settings: { schema: WECHATPAY_SETTINGS, read: wechatpayConfig },
  describe: (settings) => `${settings.baseUrl} (sp_mchid ${settings.spMchid})`,
  /** The configured account (`default`), or undefined when WECHATPAY_SP_MCHID is not set. */
  fromConfig(config, settings) {
    if (!settings) return undefined;
    return wechatpayChannelFactory({
      default: { ...settings, timeoutMs: Math.max(1_000, config.api.requestTimeoutMs - 2_000) },
    });
  },
};
