import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

interface Waiter {
  resolve(at: number): void;
  reject(err: Error): void;
}

/**
 * The merchant's end of the full cycle: an HTTP endpoint on loopback that verifies every
 * notification's Standard Webhooks signature with the app's webhook secret, as a merchant's
 * server would, and tells the bench when a given event for a given order has arrived.
 */
export class WebhookReceiver {
  private server?: http.Server;
  private readonly webhook: Webhook;
  private readonly waiters = new Map<string, Waiter>();
  private readonly arrived = new Map<string, number>();
  /** Deliveries whose signature did not verify (answered 400, so durapay would retry them). */
  rejected = 0;
  received = 0;
  /** Every verified delivery, repeats included (a repeat carries the same webhook-id). */
  readonly deliveries: {
    id: string;
    type: string;
    tradeNo?: string;
    refundNo?: string;
    transferNo?: string;
  }[] = [];
  url = '';

  constructor(webhookSecret: string) {
    this.webhook = new Webhook(webhookSecret);
  }

  private static key(type: string, tradeNo: string): string {
    return `${type}:${tradeNo}`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        let event: {
          type?: unknown;
          data?: { trade_no?: unknown; refund_no?: unknown; transfer_no?: unknown };
        };
        try {
          event = this.webhook.verify(Buffer.concat(chunks).toString('utf8'), headers) as typeof event;
        } catch {
          this.rejected += 1;
          res.writeHead(400).end();
          return;
        }
        this.received += 1;
        res.writeHead(204).end();
        this.deliveries.push({
          id: headers['webhook-id'] ?? '',
          type: String(event.type),
          tradeNo: typeof event.data?.trade_no === 'string' ? event.data.trade_no : undefined,
          refundNo: typeof event.data?.refund_no === 'string' ? event.data.refund_no : undefined,
          transferNo: typeof event.data?.transfer_no === 'string' ? event.data.transfer_no : undefined,
        });
        if (typeof event.type !== 'string' || typeof event.data?.trade_no !== 'string') return;
        const key = WebhookReceiver.key(event.type, event.data.trade_no);
        const waiter = this.waiters.get(key);
        if (waiter) {
          this.waiters.delete(key);
          waiter.resolve(at);
        } else {
          this.arrived.set(key, at);
        }
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/durapay`;
    return this;
  }

  /** Resolves with the arrival time (performance.now()) of `type` for the order `tradeNo`. */
  waitFor(type: string, tradeNo: string, timeoutMs: number): Promise<number> {
    const key = WebhookReceiver.key(type, tradeNo);
    const already = this.arrived.get(key);
    if (already !== undefined) {
      this.arrived.delete(key);
      return Promise.resolve(already);
    }
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(key);
        reject(new Error(`${type} for ${tradeNo} did not arrive within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(key, {
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
        reject,
      });
    });
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server!.close(r));
  }
}
