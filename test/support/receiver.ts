import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A merchant's webhook endpoint for tests: answers each request with the next status of its
 * script (the last one repeats) and keeps what it received.
 */
export class Receiver {
  readonly received: ReceivedRequest[] = [];
  private script: number[] = [200];
  private location?: string;
  private server?: http.Server;
  private held?: { promise: Promise<void>; release: () => void };
  url = '';

  answer(...statuses: number[]): this {
    this.script = statuses;
    return this;
  }

  /** Requests from now on get no answer until `release()` (each is still recorded as it arrives). */
  hold(): this {
    let release = () => undefined as void;
    const promise = new Promise<void>((r) => (release = r));
    this.held = { promise, release };
    return this;
  }

  release(): this {
    this.held?.release();
    this.held = undefined;
    return this;
  }

  /** A 3xx answer names `url` in its Location, as a redirect a client could follow. */
  redirectTo(url: string): this {
    this.location = url;
    return this;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        this.received.push({
          at: Date.now(),
          method: req.method ?? '',
          path: req.url ?? '',
          headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        const status = this.script.length > 1 ? this.script.shift()! : this.script[0]!;
        const redirect = status >= 300 && status < 400 && this.location ? { location: this.location } : {};
        const send = () =>
          res
            .writeHead(status, { 'content-type': 'text/plain', ...redirect })
            .end(status < 300 ? 'ok' : 'not now');
        if (this.held) void this.held.promise.then(send);
        else send();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/durapay`;
    return this;
  }

  async stop(): Promise<void> {
    this.release();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server!.close(r));
  }
}
