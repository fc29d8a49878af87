/**
 * One Alipay app's transport, shared by its ports: alipay-sdk signs every request and checks every
 * answer (validateSign), and `call` maps every failure onto a ChannelError without passing on
 * what Alipay quoted of the request.
 */
import { AlipayRequestError, AlipaySdk, type AlipayFormData } from 'alipay-sdk';
import { ChannelError } from '../errors';
import type { AlipayConfig } from './config';
import { beijingTime, type Answer } from './transformers';

export interface AlipayChannelOptions extends AlipayConfig {
  /** How long one call may take (the SDK's request timeout). */
  timeoutMs: number;
}

/** Business failures that mean "no such object", answered as not found rather than refused. */
const NOT_FOUND = new Set(['ACQ.TRADE_NOT_EXIST', 'ORDER_NOT_EXIST', 'ACQ.TRADE_SETTLE_NOT_EXIST']);

/** What the SDK wants to know about a call's extra parameters. */
interface CallParams {
  notify_url?: string;
  app_auth_token?: string;
  /** alipay.system.oauth.token's, which are request parameters, not biz_content. */
  grant_type?: string;
  code?: string;
}

export class AlipayClient {
  readonly sdk: AlipaySdk;

  constructor(readonly options: AlipayChannelOptions) {
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

  /**
   * A merchant that authorised durapay's app (第三方应用授权) is acted for with its app_auth_token:
   * the token of its channel account when the context carries one, else (orders made before
   * accounts held tokens) a subMerchantNo that is not an smid is itself the token. A secondary
   * merchant's smid (2088…) is named inside each trade instead (smidOf, toWireCreate).
   */
  authOf(ctx: { subMerchantNo?: string; appAuthToken?: string }): { app_auth_token?: string } {
    if (ctx.appAuthToken) return { app_auth_token: ctx.appAuthToken };
    const no = ctx.subMerchantNo;
    return no && !isSmid(no) ? { app_auth_token: no } : {};
  }

  /**
   * The 直付通 secondary merchant a trade names in sub_merchant, if any. With an app_auth_token
   * the subMerchantNo is the authorising merchant's user id, a 2088… number like an smid: the
   * trade is the merchant's own, not a secondary merchant's.
   */
  smidOf(ctx: { subMerchantNo?: string; appAuthToken?: string }): string | undefined {
    if (ctx.appAuthToken) return undefined;
    const no = ctx.subMerchantNo;
    return no && isSmid(no) ? no : undefined;
  }

  field(answer: Answer | undefined, key: string, what: string): string {
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
  call(
    what: string,
    method: string,
    params: { bizContent?: Record<string, unknown> } & CallParams,
    formData?: AlipayFormData,
  ): Promise<Answer | undefined> {
    return this.request(what, method, params, formData, []);
  }

  /**
   * `call`, with answers of the given codes besides 10000 handed back as they are: trade.pay's
   * 10003 (the buyer is confirming in the wallet) is where the payment stands, not a failure.
   */
  callAnswering(
    what: string,
    method: string,
    params: { bizContent?: Record<string, unknown> } & CallParams,
    codes: readonly string[],
  ): Promise<Answer | undefined> {
    return this.request(what, method, params, undefined, codes);
  }

  private async request(
    what: string,
    method: string,
    params: { bizContent?: Record<string, unknown> } & CallParams,
    formData: AlipayFormData | undefined,
    answered: readonly string[],
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
    if (code === '10000' || answered.includes(code)) return answer;
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
export function isSmid(subMerchantNo: string): boolean {
  return /^2088\d{12}$/.test(subMerchantNo);
}
