/**
 * A buyer on the hosted checkout over plain HTTP, for the tests that need many at once (a browser
 * each would cost a Chromium page): a user agent, a cookie jar (the offline wallets know their
 * user by a cookie, as a phone's wallet knows its own), redirects followed by hand so that every
 * hop can be seen, and the JS bridges' calls made as the wallet's in-app browser makes them.
 */
export const WECHAT_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.50(0x18003231) NetType/WIFI Language/zh_CN';
export const ALIPAY_UA =
  'Mozilla/5.0 (Linux; U; Android 14; zh-CN; Pixel 8 Build/UQ1A) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.0.0 Mobile Safari/537.36 AlipayClient/10.6.10.8000 Language/zh-Hans';
export const PLAIN_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

export interface Visit {
  status: number;
  /** The address of the last response (after the redirects). */
  url: string;
  /** Every address visited, the first one included. */
  hops: string[];
  html: string;
}

export class CheckoutBuyer {
  private readonly cookies = new Map<string, string>();

  constructor(readonly userAgent: string) {}

  private cookieHeader(): string {
    return [...this.cookies.entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      if (at > 0) this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { 'User-Agent': this.userAgent, Cookie: this.cookieHeader(), ...(init.headers ?? {}) },
    });
    this.keep(res);
    return res;
  }

  /** Opens `url` and follows its redirects (at most 10), as a browser would. */
  async open(url: string, init: RequestInit = {}): Promise<Visit> {
    const hops = [url];
    let res = await this.fetch(url, init);
    for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
      const next = new URL(res.headers.get('location')!, hops[hops.length - 1]).toString();
      await res.body?.cancel();
      hops.push(next);
      res = await this.fetch(next);
    }
    return { status: res.status, url: hops[hops.length - 1]!, hops, html: await res.text() };
  }

  /** The order page's data block: the wallet, the bridge's parameters and the status URL. */
  static pageData(html: string): {
    wallet: string | null;
    bridge: Record<string, unknown> | null;
    statusUrl: string;
    status: string;
  } {
    const match = /<script type="application\/json" id="checkout-data">([\s\S]*?)<\/script>/.exec(html);
    if (!match) throw new Error(`not an order page:\n${html.slice(0, 400)}`);
    return JSON.parse(match[1]!) as never;
  }

  /** The message page's reason (`data-message`), or undefined for any other page. */
  static messageOf(html: string): string | undefined {
    return /data-message="([a-z_]+)"/.exec(html)?.[1];
  }

  /** What WeChat's in-app browser does with the page's getBrandWCPayRequest: the bridge's err_msg. */
  async wechatBridgePay(baseUrl: string, params: Record<string, unknown>): Promise<string> {
    const res = await this.fetch(`${baseUrl}/wechatpay/js-bridge/getBrandWCPayRequest`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(params),
    });
    return ((await res.json()) as { err_msg: string }).err_msg;
  }

  /** What the Alipay app does with the page's tradePay: the bridge's resultCode. */
  async alipayBridgePay(baseUrl: string, params: Record<string, unknown>): Promise<string> {
    const res = await this.fetch(`${baseUrl}/alipay/js-bridge/tradePay`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(params),
    });
    return ((await res.json()) as { resultCode: string }).resultCode;
  }
}
