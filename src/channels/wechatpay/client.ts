/**
 * One WeChat Pay service-provider account's transport, shared by its ports: the merchant key that
 * signs requests (wechatpay-axios-plugin), the platform keys that verify answers and seal fields
 * (certificates.ts), and `call`, which maps every failure onto a ChannelError.
 */
import type { KeyObject } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type Readable, isReadable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import axios, {
  isAxiosError,
  type AxiosError,
  type AxiosInstance,
  type InternalAxiosRequestConfig,
} from 'axios';
import { Decorator } from 'wechatpay-axios-plugin';
import { outboundHttpSpan } from '../../platform/spans';
import { ChannelError } from '../errors';
import type { ChannelContext } from '../ports';
import { PlatformKeyring, type CertificatesAnswer } from './certificates';
import type { WechatpayConfig } from './config';
import { privateKeyFrom, publicKeyFrom } from './signature';

export interface WechatpayChannelOptions extends WechatpayConfig {
  /** How long one call may wait without receiving anything (axios' idle timeout, not a deadline). */
  timeoutMs: number;
  /** Platform-certificate mode: the shortest gap between downloads an unknown serial asks for (1 min). */
  certificateRefreshGapMs?: number;
}

interface CallOptions {
  /** The query string. */
  params?: Record<string, string>;
  /** A 404 with this code answers undefined: the object is unknown. */
  notFoundCode?: string;
  headers?: Record<string, string>;
  /** A media upload's `meta`, the part of a multipart body the request signature covers. */
  meta?: Record<string, string>;
  /** An image download's bytes (the answer is then a Buffer). */
  binary?: true;
}

interface WireError {
  code?: string;
  message?: string;
}

export class WechatpayClient {
  readonly merchantKey: KeyObject;
  readonly keyring: PlatformKeyring;
  /** The client, made again whenever the set of platform keys it verifies answers with changes. */
  private http: { instance: AxiosInstance; serials: string } | undefined;

  constructor(readonly options: WechatpayChannelOptions) {
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

  get account() {
    return { spMchid: this.options.spMchid, spAppid: this.options.spAppid };
  }

  /** The sub-merchant every partner API call names: the order's merchant, onboarded at WeChat Pay. */
  subMchid(ctx: ChannelContext): string {
    if (!ctx.subMerchantNo) {
      throw new ChannelError(
        'refused',
        'WeChat Pay needs the sub_mchid of an onboarded merchant: create the order with a merchant_id whose merchant is active at WeChat Pay',
      );
    }
    return ctx.subMerchantNo;
  }

  field(value: string | undefined, name: string): string {
    if (!value) throw new ChannelError('invalid_response', `WeChat Pay answer without ${name}`);
    return value;
  }

  /**
   * One v3 call. Answers the parsed body; undefined for a 404 with `notFoundCode` (the object
   * is unknown). 4xx is a refusal (`CODE: message`), 5xx, 429 or no connection "unreachable",
   * no answer in time "timeout", an answer whose signature fails "invalid_response".
   */
  async call(
    what: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    data?: unknown,
    options: CallOptions = {},
  ): Promise<unknown> {
    const { params, notFoundCode, headers, meta, binary } = options;
    try {
      // `meta` is what a multipart upload is signed over (the library's request interceptor reads it).
      const config = {
        method,
        url,
        data,
        params,
        headers,
        ...(meta ? { meta } : {}),
        ...(binary ? { responseType: 'arraybuffer' as const } : {}),
      };
      const client = await this.client();
      // By hand: axios goes through Node's http module, whose instrumentation is a require hook.
      const res = await outboundHttpSpan(
        { method, url: `${this.options.baseUrl}/${url}` },
        () => client.request(config),
        httpStatusOf,
      );
      return binary
        ? {
            content: Buffer.from(res.data as ArrayBuffer),
            contentType: String(res.headers['content-type'] ?? ''),
          }
        : res.data;
    } catch (err) {
      if (!isAxiosError(err)) throw err;
      const res = err.response;
      const wire = (typeof res?.data === 'object' && res.data !== null ? res.data : {}) as WireError;
      if (res?.status === 404 && notFoundCode !== undefined && wire.code === notFoundCode) return undefined;
      throw this.failure(what, err);
    }
  }

  /**
   * GET of a download link WeChat Pay handed out (a statement's `download_url`), signed like any
   * call, streamed to `path`; answers the bytes written. The file itself comes unsigned: the
   * library leaves the answers of its known download paths (/v3/billdownload/file …) unverified
   * when the request names that path relative to the base URL, with the query as `params`, which
   * is why the link is taken apart here rather than passed whole.
   */
  async download(what: string, link: string, path: string): Promise<number> {
    const base = new URL(`${this.options.baseUrl}/`);
    const target = new URL(link);
    if (target.origin !== base.origin || !target.pathname.startsWith(base.pathname)) {
      throw new ChannelError(
        'invalid_response',
        `WeChat Pay ${what}: the link ${target.origin}${target.pathname} is not on ${this.options.baseUrl}`,
      );
    }
    const url = target.pathname.slice(base.pathname.length);
    const params = Object.fromEntries(target.searchParams);
    try {
      const client = await this.client();
      const res = await outboundHttpSpan(
        { method: 'GET', url: `${target.origin}${target.pathname}` },
        () => client.request<Readable>({ method: 'GET', url, params, responseType: 'stream' }),
        httpStatusOf,
      );
      await pipeline(res.data, createWriteStream(path));
      return (await stat(path)).size;
    } catch (err) {
      if (!isAxiosError(err)) {
        if (err instanceof ChannelError) throw err;
        // The local file could not be written (no such folder, a full disk): not WeChat Pay's doing.
        if (typeof (err as { path?: unknown }).path === 'string') throw err;
        // The body broke off half way: nothing trustworthy was written.
        const code = (err as { code?: unknown }).code;
        throw new ChannelError(
          'unreachable',
          `WeChat Pay ${what} broke off: ${typeof code === 'string' ? code : String(err)}`,
        );
      }
      // An error's body arrives as a stream too: read it (it is a short JSON) to name the refusal.
      const res = err.response;
      if (res && isReadable(res.data)) res.data = await errorBody(res.data as Readable);
      throw this.failure(what, err);
    }
  }

  /**
   * A failed call as a ChannelError: 4xx is a refusal (`CODE: message`), 5xx, 429 or no
   * connection "unreachable", no answer in time "timeout", an answer whose signature fails
   * "unreachable" too (see below).
   */
  private failure(what: string, err: AxiosError): ChannelError {
    // A 2xx whose signature, serial or timestamp failed: WeChat Pay may have done what was
    // asked, so this is not a refusal; the caller retries (every call is idempotent).
    if (err.code?.startsWith('EV3_')) {
      // Perhaps signed by a platform certificate durapay has not fetched yet.
      this.keyring.markStale();
      return new ChannelError(
        'unreachable',
        `WeChat Pay ${what}: the answer failed verification (${err.code})`,
      );
    }
    const res = err.response;
    if (!res) {
      if (err.code === 'ECONNABORTED' || err.code === 'ETIMEDOUT') {
        return new ChannelError(
          'timeout',
          `WeChat Pay gave no answer to ${what} within ${this.options.timeoutMs} ms`,
        );
      }
      return new ChannelError(
        'unreachable',
        `WeChat Pay unreachable for ${what}: ${err.code ?? err.message}`,
      );
    }
    const body = (typeof res.data === 'object' && res.data !== null ? res.data : {}) as WireError;
    const code = typeof body.code === 'string' ? body.code : `HTTP_${res.status}`;
    const message = typeof body.message === 'string' ? body.message : '';
    if (res.status >= 400 && res.status < 500 && res.status !== 429) {
      return new ChannelError('refused', `${code}: ${message}`.trim());
    }
    return new ChannelError('unreachable', `WeChat Pay could not ${what}: ${code} ${message}`.trim());
  }
}

/** The HTTP status of an axios answer, or of the answer an axios error carries. */
function httpStatusOf(resultOrError: unknown): number | undefined {
  if (isAxiosError(resultOrError)) return resultOrError.response?.status;
  const status = (resultOrError as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** A short error answer that came as a stream, parsed as JSON when it is (its text otherwise). */
async function errorBody(stream: Readable): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    // An error answer is a few hundred bytes; more is not one worth reading.
    if (size > 64 * 1024) break;
    chunks.push(chunk);
    size += chunk.length;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
