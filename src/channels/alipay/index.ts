// Longer than 300 lines: the adapter for every port Alipay offers and its transport in the one
// file the registry line names, as for WeChat Pay; wire types and state mapping are in
// transformers.ts, onboarding's body in zft.ts.
/**
 * The Alipay channel (`channel_code: "alipay"`) on the open platform's gateway API with RSA2. The
 * wire is alipay-sdk's: it signs every request, checks every answer's signature (validateSign),
 * builds the page, wap and app payment strings, and verifies notifications. This adapter maps
 * durapay's ports onto Alipay's methods; a secondary merchant (直付通) is named on each trade.
 */
import { createHash } from 'node:crypto';
import { AlipayFormData, AlipayRequestError, AlipaySdk } from 'alipay-sdk';
import { ALIPAY_SETTINGS, alipayConfig, type AlipayConfig } from './config';
import { qrImage } from '../../platform/qr';
import { ChannelError } from '../errors';
import type {
  ApplicationState,
  CallbackCheck,
  CallbackReply,
  CallbackRequest,
  CallbacksPort,
  Channel,
  ChannelCapabilities,
  ChannelEvent,
  OnboardingPort,
  PaymentState,
  PaymentsPort,
  ProfitSharingPort,
  RefundsPort,
} from '../ports';
import { referenceOf, type ChannelDescriptor, type ChannelFactory } from '../ports';
import {
  ALIPAY_MAX_AMOUNT_FEN,
  ALIPAY_PAY_METHODS,
  beijingTime,
  CREATE_METHOD,
  notifyParamsOf,
  notifySays,
  paymentStateOf,
  receiverType,
  refundAnswerStateOf,
  refundEventOf,
  refundQueryStateOf,
  settleStateOf,
  toWireCreate,
  toWireRefund,
  unconfirmedRefundEventOf,
  yuanOf,
  zftStateOf,
  type Answer,
} from './transformers';
import { imageTypeOf, toWireZft } from './zft';

export interface AlipayChannelOptions extends AlipayConfig {
  /** How long one call may take (the SDK's request timeout). */
  timeoutMs: number;
}

export const ALIPAY_CAPABILITIES: ChannelCapabilities = {
  payMethods: ALIPAY_PAY_METHODS,
  maxAmount: ALIPAY_MAX_AMOUNT_FEN,
  currency: 'CNY',
};

/** Business failures that mean "no such object", answered as not found rather than refused. */
const NOT_FOUND = new Set(['ACQ.TRADE_NOT_EXIST', 'ORDER_NOT_EXIST', 'ACQ.TRADE_SETTLE_NOT_EXIST']);

/** What the SDK wants to know about a call's extra parameters. */
interface CallParams {
  notify_url?: string;
  app_auth_token?: string;
}

export class AlipayChannel implements Channel {
  readonly code = 'alipay';
  readonly capabilities = ALIPAY_CAPABILITIES;
  private readonly sdk: AlipaySdk;

  constructor(private readonly options: AlipayChannelOptions) {
    this.sdk = new AlipaySdk({
      appId: options.appId,
      privateKey: options.privateKey,
      // The configured key is PKCS#8 PEM whatever form it was given in (config.ts).
      keyType: 'PKCS8',
      alipayPublicKey: options.alipayPublicKey,
      gateway: options.gatewayUrl,
      timeout: options.timeoutMs,
      signType: 'RSA2',
      camelcase: false,
    });
  }

  readonly payments: PaymentsPort = {
    create: async (ctx, input) => {
      const method = CREATE_METHOD[input.payMethod];
      if (!method) throw new ChannelError('not_supported', `Alipay does not support ${input.payMethod}`);
      const smid = ctx.subMerchantNo && isSmid(ctx.subMerchantNo) ? ctx.subMerchantNo : undefined;
      const bizContent = toWireCreate(input, smid);
      const params = { bizContent, notify_url: input.callbackUrl, ...this.authOf(ctx) };
      switch (input.payMethod) {
        case 'qr_code': {
          const answer = await this.call('precreate trade', method, params);
          const qrCode = this.field(answer, 'qr_code', 'precreate');
          return {
            channelTradeNo: null,
            payCredential: { qr_code: qrCode, qr_image: await qrImage(qrCode) },
          };
        }
        case 'web':
        case 'h5': {
          // A signed URL to Alipay's cashier: the trade exists at Alipay once the buyer opens it.
          const payUrl = this.sdk.pageExecute(method, 'GET', {
            bizContent,
            notify_url: input.callbackUrl,
            timestamp: beijingTime(new Date()),
            ...this.authOf(ctx),
            ...this.returnUrl(input.extra),
          });
          return { channelTradeNo: null, payCredential: { pay_url: payUrl } };
        }
        case 'app': {
          // The signed order string the merchant's app hands to the Alipay SDK on the phone.
          const orderString = this.sdk.sdkExecute(method, {
            bizContent,
            notify_url: input.callbackUrl,
            timestamp: beijingTime(new Date()),
            ...this.authOf(ctx),
          });
          return { channelTradeNo: null, payCredential: { order_string: orderString } };
        }
        default: {
          const answer = await this.call('create trade', method, params);
          const tradeNo = this.field(answer, 'trade_no', 'trade create');
          // my.tradePay({ tradeNO }) in the Alipay app or mini program pays it.
          return { channelTradeNo: tradeNo, payCredential: { trade_no: tradeNo } };
        }
      }
    },
    query: async (ctx, tradeNo) => {
      const answer = await this.call('query trade', 'alipay.trade.query', {
        bizContent: { out_trade_no: tradeNo },
        ...this.authOf(ctx),
      });
      return answer === undefined ? { status: 'not_found' } : paymentStateOf(answer);
    },
    close: async (ctx, tradeNo): Promise<PaymentState> => {
      try {
        await this.call('close trade', 'alipay.trade.close', {
          bizContent: { out_trade_no: tradeNo },
          ...this.authOf(ctx),
        });
      } catch (err) {
        // Paid first: the query below has the payment.
        if (!(err instanceof ChannelError && err.message.startsWith('ACQ.TRADE_STATUS_ERROR'))) throw err;
      }
      const state = await this.payments.query(ctx, tradeNo);
      // A trade still waiting after the close was opened by the buyer meanwhile: not closed yet.
      if (state.status === 'pending') {
        throw new ChannelError(
          'unreachable',
          `Alipay still has trade ${tradeNo} waiting for payment after the close`,
        );
      }
      // No trade: a code nobody scanned or a page nobody opened. Alipay cannot close what it does
      // not have; a buyer who opens it before time_expire still pays, and that payment's
      // notification is recorded as paid after close, flagged for refund review.
      return state.status === 'not_found' ? { status: 'closed' } : state;
    },
  };

  readonly refunds: RefundsPort = {
    refund: async (ctx, input) => {
      try {
        const answer = await this.call('refund', 'alipay.trade.refund', {
          bizContent: toWireRefund(input),
          ...this.authOf(ctx),
        });
        if (answer === undefined)
          throw new ChannelError('refused', `ACQ.TRADE_NOT_EXIST: no trade ${input.tradeNo}`);
        // Money moved now, or a refund Alipay took to finish later: the query says which.
        return refundAnswerStateOf(answer) ?? (await this.refunds.query(ctx, input));
      } catch (err) {
        // No trustworthy answer, or a refusal a retry of a refund that went through can earn
        // (ACQ.TRADE_HAS_CLOSE after a full refund): ask for the refund before saying it failed.
        if (!(err instanceof ChannelError)) throw err;
        const found = await this.refunds.query(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    query: async (ctx, { tradeNo, refundNo }) => {
      const answer = await this.call('query refund', 'alipay.trade.fastpay.refund.query', {
        bizContent: { out_trade_no: tradeNo, out_request_no: refundNo, query_options: ['gmt_refund_pay'] },
        ...this.authOf(ctx),
      });
      return answer === undefined ? { status: 'not_found' } : refundQueryStateOf(answer);
    },
  };

  /** Royalty: receivers bound to the app once, then one settle order per durapay share. */
  readonly profitSharing: ProfitSharingPort = {
    registerReceivers: async (ctx, receivers) => {
      const receiverList = receivers.map((r) => ({
        type: receiverType(r.type, r.account),
        account: r.account,
        ...(r.name ? { name: r.name } : {}),
      }));
      // The same receivers are the same binding: its request number is made from them.
      const outRequestNo = `bind-${receiverList.map((r) => `${r.type}:${r.account}`).join(',')}`;
      await this.call('bind royalty receivers', 'alipay.trade.royalty.relation.bind', {
        bizContent: { out_request_no: digest(outRequestNo), receiver_list: receiverList },
        ...this.authOf(ctx),
      });
    },
    share: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError('refused', `order ${input.tradeNo} has no Alipay trade_no to settle`);
      }
      await this.call('settle', 'alipay.trade.order.settle', {
        bizContent: {
          out_request_no: input.shareNo,
          trade_no: ctx.channelTradeNo,
          royalty_parameters: input.receivers.map((r) => ({
            royalty_type: 'transfer',
            trans_in_type: receiverType(r.type, r.account),
            trans_in: r.account,
            amount: yuanOf(r.amount),
            desc: `profit sharing of ${input.tradeNo}`,
          })),
          // The one settlement of the trade: what is left frozen goes to the seller.
          extend_params: { royalty_finish: 'true' },
        },
        ...this.authOf(ctx),
      });
      const state = await this.profitSharing.query!(ctx, input);
      return state.status === 'not_found' ? { status: 'processing' } : state;
    },
    query: async (ctx, { shareNo }) => {
      if (!ctx.channelTradeNo) return { status: 'not_found' };
      const answer = await this.call('query settle', 'alipay.trade.order.settle.query', {
        bizContent: { out_request_no: shareNo, trade_no: ctx.channelTradeNo },
        ...this.authOf(ctx),
      });
      return answer === undefined ? { status: 'not_found' } : settleStateOf(answer);
    },
    /**
     * 分账解冻: a trade paid with royalty_freeze keeps its funds frozen until a settle says the
     * royalty is finished; a settle with royalty_finish and no royalty_parameters releases it all
     * to the seller (Alipay's 商家分账 guide: 不传入分账条款，只传入分账完结标识). Alipay answers it
     * at once; a repeat of the same out_request_no is the same settle.
     */
    unfreeze: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError('refused', `order ${input.tradeNo} has no Alipay trade_no to unfreeze`);
      }
      await this.call('unfreeze', 'alipay.trade.order.settle', {
        bizContent: {
          out_request_no: input.unfreezeNo,
          trade_no: ctx.channelTradeNo,
          extend_params: { royalty_finish: 'true' },
        },
        ...this.authOf(ctx),
      });
      return { status: 'finished' };
    },
    // 退分账 travels on the refund itself (refund_royalty_parameters), from any receiver Alipay settles to.
    returns: 'with_refund',
    returnable: (receiver) => {
      try {
        receiverType(receiver.type, receiver.account);
        return true;
      } catch {
        return false;
      }
    },
  };

  /**
   * Secondary merchants (直付通): images uploaded for ids, the application created with durapay's
   * application_id as its external_id, then followed by it until Alipay finishes it with an smid.
   */
  readonly onboarding: OnboardingPort = {
    problemWith: (input) => {
      try {
        toWireZft({ ...input, applicationId: 'check' });
        return undefined;
      } catch (err) {
        return err instanceof ChannelError ? err.message : String(err);
      }
    },
    uploadFile: async (_ctx, input) => {
      const form = new AlipayFormData();
      form.addField('image_type', imageTypeOf(input));
      form.addField('timestamp', beijingTime(new Date()));
      form.addFile('image_content', input.fileName || 'image', input.content);
      const answer = await this.call('upload image', 'ant.merchant.expand.indirect.image.upload', {}, form);
      return { fileId: this.field(answer, 'image_id', 'image upload') };
    },
    submit: async (_ctx, input): Promise<ApplicationState> => {
      const body = toWireZft(input);
      // A retried submit finds the application its first try made, by external_id.
      const earlier = await this.findZft(input.applicationId);
      if (earlier) return earlier;
      try {
        const answer = await this.call(
          'create secondary merchant',
          'ant.merchant.expand.indirect.zft.create',
          {
            bizContent: body,
          },
        );
        const orderId = this.field(answer, 'order_id', 'secondary merchant create');
        return zftStateOf({ order_id: orderId, status: '' });
      } catch (err) {
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await this.findZft(input.applicationId).catch(() => undefined);
        if (!found) throw err;
        return found;
      }
    },
    query: async (_ctx, applicationId): Promise<ApplicationState> => {
      const found = await this.findZft(applicationId);
      if (!found)
        throw new ChannelError('refused', `Alipay has no application with external_id ${applicationId}`);
      return found;
    },
  };

  readonly callbacks: CallbacksPort = {
    // A notification is a form of a few dozen short fields (fund_bill_list included): a few KiB.
    maxBodyBytes: 64 * 1024,
    verify: (req: CallbackRequest): Promise<CallbackCheck> => Promise.resolve(this.verifyNotify(req)),
    decode: async (req: CallbackRequest): Promise<ChannelEvent> => {
      const params = notifyParamsOf(req.rawBody);
      if (params.app_id !== this.options.appId) {
        throw new ChannelError(
          'invalid_response',
          `notification for app_id ${params.app_id ?? ''}, not this app`,
        );
      }
      if (this.options.sellerId && params.seller_id && params.seller_id !== this.options.sellerId) {
        throw new ChannelError(
          'invalid_response',
          `notification for seller_id ${params.seller_id}, not this account`,
        );
      }
      const says = notifySays(params);
      // A refund's notification names the trade's total refunded: `confirm` asks for the refund.
      return says.kind === 'event' ? says.event : unconfirmedRefundEventOf(says);
    },
    identify: referenceOf,
    /**
     * A refund's own amount and state, asked of Alipay in the order's context: a merchant that
     * authorised durapay's app has its trades under its app_auth_token, and a query without it
     * finds no trade (ACQ.TRADE_NOT_EXIST). A payment's notification is whole already.
     */
    confirm: async (ctx, event) => {
      if (event.kind !== 'refund') return event;
      const answer = await this.call('query refund', 'alipay.trade.fastpay.refund.query', {
        bizContent: {
          out_trade_no: event.tradeNo,
          out_request_no: event.refundNo,
          query_options: ['gmt_refund_pay'],
        },
        ...this.authOf(ctx),
      });
      if (answer === undefined)
        throw new ChannelError('invalid_response', `Alipay has no trade ${event.tradeNo}`);
      return refundEventOf(event, answer);
    },
    // Alipay sends a notification again until the answer is exactly `success`.
    reply: (outcome): CallbackReply => ({
      status: 200,
      contentType: 'text/plain',
      body: outcome.ok ? 'success' : 'fail',
    }),
  };

  /** Is a notification Alipay's? RSA2 over its sorted fields, by the SDK, on the decoded values. */
  verifyNotify(req: CallbackRequest): CallbackCheck {
    let params: Record<string, string>;
    try {
      params = notifyParamsOf(req.rawBody);
    } catch {
      return { ok: false, reason: 'the notification is not a form' };
    }
    if (!params.sign) return { ok: false, reason: 'the notification has no sign' };
    // RSA2 only: RSA (SHA-1) is not accepted, and an unknown type would make the SDK throw.
    if (params.sign_type !== undefined && params.sign_type !== 'RSA2') {
      return { ok: false, reason: `sign_type ${params.sign_type} is not RSA2` };
    }
    // Values arrive form-decoded; checkNotifySignV2 signs them as they are (no second decoding).
    return this.sdk.checkNotifySignV2(params)
      ? { ok: true }
      : { ok: false, reason: 'the notification sign does not match' };
  }

  private async findZft(applicationId: string): Promise<ApplicationState | undefined> {
    const answer = await this.call(
      'query secondary merchant',
      'ant.merchant.expand.indirect.zftorder.query',
      {
        bizContent: { external_id: applicationId },
      },
    );
    const orders = Array.isArray(answer?.orders) ? (answer.orders as Record<string, unknown>[]) : [];
    // Only this application's order: another's smid would route this merchant's money elsewhere.
    const order = orders.find((o) => o?.external_id === applicationId);
    return order === undefined ? undefined : zftStateOf(order);
  }

  /**
   * A merchant that authorised durapay's app (第三方应用授权) is acted for with its app_auth_token;
   * a secondary merchant's smid (2088…) is named inside each trade instead (toWireCreate).
   */
  private authOf(ctx: { subMerchantNo?: string }): { app_auth_token?: string } {
    const no = ctx.subMerchantNo;
    return no && !isSmid(no) ? { app_auth_token: no } : {};
  }

  private returnUrl(extra: Record<string, unknown> | undefined): { return_url?: string } {
    const url = extra && Object.hasOwn(extra, 'return_url') ? extra.return_url : undefined;
    return typeof url === 'string' && url !== '' ? { return_url: url } : {};
  }

  private field(answer: Answer | undefined, key: string, what: string): string {
    const value = answer?.[key];
    if (typeof value !== 'string' || value === '') {
      throw new ChannelError('invalid_response', `Alipay ${what} answered without ${key}`);
    }
    return value;
  }

  /**
   * One gateway call, its answer's signature checked by the SDK. Answers the business fields, or
   * undefined for a "no such object" failure. 40004 and the 4000x argument errors are refusals
   * (`SUB_CODE: message`); 20000, no connection or an unreadable or unverifiable answer is
   * "unreachable" (every call is idempotent, so the caller may try again); no answer in time, "timeout".
   */
  private async call(
    what: string,
    method: string,
    params: { bizContent?: Record<string, unknown> } & CallParams,
    formData?: AlipayFormData,
  ): Promise<Answer | undefined> {
    let answer: Answer;
    try {
      // Alipay reads timestamp as Beijing time; the SDK would write this machine's local time.
      const signed = formData ? params : { ...params, timestamp: beijingTime(new Date()) };
      answer = (await this.sdk.exec(method, signed, {
        validateSign: true,
        ...(formData ? { formData } : {}),
      })) as Answer;
    } catch (err) {
      if (err instanceof TypeError && (err as { code?: string }).code === 'ERR_INVALID_ARG_TYPE') {
        // An answer without a sign: Alipay does not sign some of its errors (an unknown app id).
        throw new ChannelError('refused', `Alipay answered ${what} with an unsigned error`);
      }
      if (!(err instanceof AlipayRequestError)) throw err;
      const cause = err.cause as { name?: string; code?: string } | undefined;
      if (cause?.name?.includes('Timeout') || cause?.code === 'UND_ERR_HEADERS_TIMEOUT') {
        throw new ChannelError(
          'timeout',
          `Alipay gave no answer to ${what} within ${this.options.timeoutMs} ms`,
        );
      }
      // Never the raw answer in the message: a verification failure's text quotes it whole.
      const why = err.message.startsWith('验签失败')
        ? 'the answer failed signature verification'
        : safeText(err.message);
      throw new ChannelError('unreachable', `Alipay could not ${what}: ${why}`);
    }
    const code = String(answer.code ?? '');
    if (code === '10000') return answer;
    const subCode = typeof answer.sub_code === 'string' ? answer.sub_code : `CODE_${code}`;
    // A signature failure's sub_msg quotes the signed string, biz_content and all (identity
    // numbers, for an application): never passed on. Any other is cut short and masked.
    const subMsg =
      typeof answer.sub_msg === 'string' && !/invalid-signature/.test(subCode)
        ? safeText(answer.sub_msg)
        : '';
    if (NOT_FOUND.has(subCode)) return undefined;
    if (code === '20000' || /SYSTEM_ERROR|UNKNOW_ERROR/.test(subCode)) {
      throw new ChannelError('unreachable', `Alipay could not ${what}: ${subCode} ${subMsg}`.trim());
    }
    // 20001 (an app_auth_token refused), 4000x (arguments, permissions) and 40004 (business).
    throw new ChannelError('refused', `${subCode}: ${subMsg}`.trim());
  }
}

/**
 * Alipay's words as durapay passes them on: cut before any quoted signed string, at most 120
 * characters, long digit runs (identity, card and phone numbers) masked.
 */
export function safeText(text: string): string {
  const cut = text.split(/验签字符串|validateStr|signStr/)[0]!;
  return cut
    .replace(/\d{6,}/g, (digits) => `${digits.slice(0, 2)}…${digits.slice(-2)}`)
    .slice(0, 120)
    .trim();
}

/** A secondary merchant's smid (a 2088… PID), as opposed to an app_auth_token. */
function isSmid(subMerchantNo: string): boolean {
  return /^2088\d{12}$/.test(subMerchantNo);
}

/** A short stable name for a binding, as out_request_no. */
function digest(text: string): string {
  // Alipay takes at most 32 letters, digits or underscores here.
  return `b${createHash('sha256').update(text).digest('hex').slice(0, 31)}`;
}

/** The Alipay adapters of named accounts (one app each). */
export function alipayChannelFactory(accounts: Record<string, AlipayChannelOptions>): ChannelFactory {
  return {
    code: 'alipay',
    accounts: Object.keys(accounts),
    create: (account) => new AlipayChannel(accounts[account]!),
  };
}

/** Alipay: its settings are ALIPAY_* (./config.ts), read into the configuration's `alipay`. */
export const alipayChannel: ChannelDescriptor<'alipay', AlipayConfig> = {
  code: 'alipay',
  label: 'Alipay',
  settings: { schema: ALIPAY_SETTINGS, read: alipayConfig },
  describe: (settings) => `${settings.gatewayUrl} (app_id ${settings.appId})`,
  /** The configured app (`default`), or undefined when ALIPAY_APP_ID is not set. */
  fromConfig(config, settings) {
    if (!settings) return undefined;
    return alipayChannelFactory({
      // Short enough that a refund's follow-up query fits in the same attempt of its activity.
      default: { ...settings, timeoutMs: Math.max(1_000, config.api.requestTimeoutMs - 5_000) },
    });
  },
};
