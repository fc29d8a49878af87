/**
 * WeChat Pay's API v2 transport, for the products still on it (委托代扣's sign page, deductions,
 * contract query and unsigning): XML bodies signed with the API v2 key, by wechatpay-axios-plugin's
 * XML client (Decorator.xmlBased), which adds nonce_str, signs (HMAC-SHA256 when the body says
 * so, MD5 otherwise) and verifies every SUCCESS answer's sign. Failures map onto ChannelError as
 * the v3 client's do (client.ts).
 */
import { isAxiosError, type AxiosInstance } from 'axios';
import { Decorator, Hash } from 'wechatpay-axios-plugin';
import { outboundHttpSpan } from '../../platform/spans';
import { ChannelError } from '../errors';

export interface WechatpayV2Options {
  baseUrl: string;
  spMchid: string;
  apiV2Key: string;
  timeoutMs: number;
}

/** A v2 answer, its fields as the XML carries them (every value a string). */
export type V2Answer = Record<string, string>;

/** A v2 call's refusal: WeChat Pay's err_code and words (result_code FAIL, the answer signed). */
export class V2Refusal extends ChannelError {
  constructor(
    readonly errCode: string,
    message: string,
  ) {
    super('refused', `${errCode}: ${message}`.trim());
  }
}

export class WechatpayV2Client {
  private readonly http: AxiosInstance;

  constructor(private readonly options: WechatpayV2Options) {
    this.http = Decorator.xmlBased({
      mchid: options.spMchid,
      secret: options.apiV2Key,
      baseURL: `${options.baseUrl}/`,
      timeout: options.timeoutMs,
    } as Parameters<typeof Decorator.xmlBased>[0]);
  }

  /** The sign of a v2 body (its `sign` and empty values left out), as WeChat Pay computes it. */
  sign(fields: Record<string, string>, type: 'MD5' | 'HMAC-SHA256' = 'MD5'): string {
    return Hash.sign(type, fields, this.options.apiV2Key);
  }

  /** Whether a v2 body (an answer, a notification) carries the sign of this account's key. */
  verifies(fields: Record<string, unknown>): boolean {
    const sign = fields.sign;
    if (typeof sign !== 'string') return false;
    const strings: Record<string, string> = {};
    for (const [k, v] of Object.entries(fields)) if (typeof v === 'string') strings[k] = v;
    const type = sign.length === 64 ? 'HMAC-SHA256' : 'MD5';
    return Hash.equals(this.sign(strings, type), sign);
  }

  /**
   * One v2 call (POST, XML). Answers the verified fields of a SUCCESS. result_code FAIL is a
   * V2Refusal with WeChat Pay's err_code, once its sign checks; return_code FAIL (a malformed
   * request, a wrong key) is a refusal too; 5xx, no connection or an answer that fails its sign
   * is 'unreachable', none in time 'timeout': what was asked may have been done.
   */
  async call(
    what: string,
    path: string,
    fields: Record<string, string>,
    nonceless = false,
  ): Promise<V2Answer> {
    try {
      const res = await outboundHttpSpan(
        { method: 'POST', url: `${this.options.baseUrl}/${path}` },
        () => this.http.post<V2Answer>(path, fields, nonceless ? ({ nonceless: true } as object) : {}),
        (r) => (isAxiosError(r) ? r.response?.status : (r as { status?: number }).status),
      );
      return res.data;
    } catch (err) {
      if (!isAxiosError(err)) throw err;
      const data = err.response?.data as Record<string, unknown> | undefined;
      if (err.code === 'EV2_RES_STATUS_CODE_NOT_SUCESS' && data && typeof data === 'object') {
        if (data.return_code !== 'SUCCESS') {
          throw new ChannelError(
            'refused',
            `WeChat Pay refused to ${what}: ${String(data.return_msg ?? 'FAIL')}`,
          );
        }
        // A business refusal counts only when WeChat Pay signed it: an unsigned FAIL may be
        // anyone's, and what was asked may have been done.
        if (!this.verifies(data)) {
          throw new ChannelError('unreachable', `WeChat Pay ${what}: a refusal whose sign does not verify`);
        }
        throw new V2Refusal(String(data.err_code ?? 'FAIL'), String(data.err_code_des ?? ''));
      }
      if (err.code?.startsWith('EV2_')) {
        throw new ChannelError(
          'unreachable',
          `WeChat Pay ${what}: the answer failed verification (${err.code})`,
        );
      }
      const status = err.response?.status;
      if (status === undefined) {
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
      if (status >= 400 && status < 500 && status !== 429) {
        throw new ChannelError('refused', `WeChat Pay refused to ${what}: HTTP ${status}`);
      }
      throw new ChannelError('unreachable', `WeChat Pay could not ${what}: HTTP ${status}`);
    }
  }
}
