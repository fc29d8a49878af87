/**
 * Asynchronous notifications (异步通知): a form POST to the trade's notify_url, signed with the
 * Alipay private key over every field but sign and sign_type, sent again on Alipay's rhythm until
 * the answer's body, trimmed, is exactly `success`. The trade's subject steers faults:
 * `[sandbox:notify-drop]` sends none, `[sandbox:notify-duplicate]` sends each attempt twice,
 * `[sandbox:notify-late]` holds the first attempt back by the first retry delay.
 * `[sandbox:lost-until-released]` sends none either (its trade is unreachable until released, router.ts).
 */
import type { KeyObject } from 'node:crypto';
import type { Background } from '../background';
import { rsa2Sign, signContent, type Params } from './wire';

/** Alipay's resending rhythm after the first attempt: 4 min, 10 min, 10 min, 1 h, 2 h, 6 h, 15 h. */
export const NOTIFY_RETRY_DELAYS_MS: readonly number[] = [4, 10, 10, 60, 120, 360, 900].map(
  (minutes) => minutes * 60_000,
);
/** How long a notify_url has to answer one attempt. */
const NOTIFY_TIMEOUT_MS = 5_000;

export interface NotifierLogger {
  info(message: string, meta?: object): void;
  warn(message: string, meta?: object): void;
}

export interface NotificationHistory {
  /** POSTs made for the trade, every attempt and duplicate counted. */
  sent: number;
  /** Whether at least one notification was queued and every one was answered `success`. */
  acknowledged: boolean;
  /** The form body of every POST, in the order sent. */
  bodies: string[];
}

/**
 * A signed form, as a notification and a page payment's return carry it: the fields plus sign,
 * signed over every field but sign and sign_type.
 */
export function signedForm(fields: Params, privateKey: KeyObject): string {
  const sign = rsa2Sign(signContent(fields, ['sign', 'sign_type']), privateKey);
  return new URLSearchParams({ ...fields, sign }).toString();
}

interface Pending {
  acknowledged: boolean;
}

export class Notifier {
  private readonly histories = new Map<string, { sent: number; bodies: string[]; pending: Pending[] }>();

  constructor(
    private readonly deps: {
      privateKey: KeyObject;
      scheduler: Background;
      scale: number;
      logger: NotifierLogger;
    },
  ) {}

  history(outTradeNo: string): NotificationHistory {
    const h = this.histories.get(outTradeNo);
    if (!h) return { sent: 0, acknowledged: false, bodies: [] };
    return {
      sent: h.sent,
      acknowledged: h.pending.length > 0 && h.pending.every((p) => p.acknowledged),
      bodies: [...h.bodies],
    };
  }

  /** Signs `fields` and posts them to `url`, retrying, as the trade's subject asks. */
  notify(outTradeNo: string, url: string | undefined, subject: string, fields: Params): void {
    const meta = { out_trade_no: outTradeNo, trade_status: fields.trade_status, url };
    if (url === undefined) return;
    if (subject.includes('[sandbox:notify-drop]') || subject.includes('[sandbox:lost-until-released]')) {
      this.deps.logger.info('alipay sandbox notification dropped (fault injection)', meta);
      return;
    }
    const history = this.histories.get(outTradeNo) ?? { sent: 0, bodies: [], pending: [] };
    this.histories.set(outTradeNo, history);
    const pending: Pending = { acknowledged: false };
    history.pending.push(pending);
    const body = signedForm(fields, this.deps.privateKey);
    const copies = subject.includes('[sandbox:notify-duplicate]') ? 2 : 1;
    const attempt = async (n: number): Promise<void> => {
      for (let i = 0; i < copies; i++) {
        history.sent++;
        history.bodies.push(body);
        if (await this.post(url, body, meta, n)) pending.acknowledged = true;
      }
      if (pending.acknowledged) return;
      const wait = NOTIFY_RETRY_DELAYS_MS[n];
      if (wait === undefined) {
        this.deps.logger.warn('alipay sandbox notification given up', { ...meta, attempt: n });
        return;
      }
      this.deps.scheduler.later(wait * this.deps.scale, () => attempt(n + 1), outTradeNo);
    };
    const late = subject.includes('[sandbox:notify-late]');
    this.deps.scheduler.later(
      late ? NOTIFY_RETRY_DELAYS_MS[0]! * this.deps.scale : 0,
      () => attempt(0),
      outTradeNo,
    );
  }

  /** One POST; true when the answer is `success`. */
  private async post(url: string, body: string, meta: Record<string, unknown>, n: number): Promise<boolean> {
    const { scheduler, logger } = this.deps;
    if (scheduler.signal.aborted) return false;
    let outcome: string;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([scheduler.signal, AbortSignal.timeout(NOTIFY_TIMEOUT_MS)]),
      });
      const text = await res.text();
      if (res.status === 200 && text.trim() === 'success') {
        logger.info('alipay sandbox notification acknowledged', { ...meta, attempt: n });
        return true;
      }
      outcome = `HTTP ${res.status}: ${text.trim().slice(0, 40)}`;
    } catch (err) {
      outcome = err instanceof Error ? err.message : String(err);
    }
    if (!scheduler.signal.aborted) {
      logger.warn('alipay sandbox notification not acknowledged', { ...meta, attempt: n, outcome });
    }
    return false;
  }
}
