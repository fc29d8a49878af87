/**
 * The trade statement (申请交易账单): `GET /v3/bill/tradebill` answers the SHA-1 of a sub-merchant's
 * day and a download link; `GET /v3/billdownload/file?token=…`, signed like any request, answers
 * the gzip file, unsigned, as WeChat's does. The file is made when the link is asked for, from the
 * payments that succeeded and the refunds that were accepted that day (China Standard Time); the
 * link lives five minutes.
 *
 * What a test may steer: an order whose description holds `[statement:amount+1]` shows one fen
 * more than was paid, `[statement:omit]` is left off; a refund whose reason holds
 * `[statement:refund-processing]` shows PROCESSING whatever it became. The controls below hold a
 * day back (STATEMENT_CREATING), give a sub-merchant the older layout, or hand out links that
 * have already expired.
 */
import { randomBytes } from 'node:crypto';
import type { Router } from 'express';
import type { SandboxContext } from './context';
import { paramError, queryParam } from './http';
import { TRADE_TYPES, type OrderRecord, type RefundRecord } from './store';
import {
  STATEMENT_AMOUNT_PLUS_ONE,
  STATEMENT_OMIT,
  STATEMENT_REFUND_PROCESSING,
  feeOf,
  shanghaiDay,
  tradebillFile,
  type TradebillLayout,
  type TradebillLine,
} from './tradebill';
import { WechatpayError } from './wire';

/** How long a download link works, as WeChat's (about five minutes). */
export const STATEMENT_LINK_LIFETIME_MS = 5 * 60_000;

const REFUND_STATES: Record<RefundRecord['status'], 'SUCCESS' | 'PROCESSING' | 'CHANGE' | 'FAIL'> = {
  SUCCESS: 'SUCCESS',
  PROCESSING: 'PROCESSING',
  ABNORMAL: 'CHANGE',
  CLOSED: 'FAIL',
};

/** What tests steer about statements; the routes read it. */
export class StatementControls {
  private readonly holds = new Map<string, number>();
  private readonly legacy = new Set<string>();
  private expiredLinks = 0;
  private readonly asked = new Map<string, number>();

  /** The next `requests` asks for `day` (any sub-merchant) answer STATEMENT_CREATING. */
  hold(day: string, requests: number): void {
    this.holds.set(day, requests);
  }

  /** The sub-merchant's statements use the older 24-column layout (or today's again). */
  useLegacyLayout(subMchid: string, legacy: boolean): void {
    if (legacy) this.legacy.add(subMchid);
    else this.legacy.delete(subMchid);
  }

  /** The next `count` links handed out have expired by the time they are used. */
  expireLinks(count: number): void {
    this.expiredLinks = count;
  }

  /** How many times a day's statement was asked for, answered or not. */
  requests(day: string): number {
    return this.asked.get(day) ?? 0;
  }

  /** Counts the ask; true when it is held back. */
  ask(day: string): boolean {
    this.asked.set(day, this.requests(day) + 1);
    const held = this.holds.get(day) ?? 0;
    if (held <= 0) return false;
    this.holds.set(day, held - 1);
    return true;
  }

  layout(subMchid: string): TradebillLayout {
    return this.legacy.has(subMchid) ? 'legacy' : 'all';
  }

  /** Whether the link being handed out is born expired. */
  takeExpired(): boolean {
    if (this.expiredLinks <= 0) return false;
    this.expiredLinks--;
    return true;
  }
}

interface Link {
  gzip: Buffer;
  expiresAt: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** `base`: where the router is mounted as the client reaches it (the links point there). */
export function statementRoutes(
  router: Router,
  ctx: SandboxContext,
  controls: StatementControls,
  base: string,
): void {
  const { keys, store, callbacks, refundDelayMs, answer, logger } = ctx;
  const links = new Map<string, Link>();

  function lines(subMchid: string, day: string): TradebillLine[] {
    const spMchid = keys.spMchid;
    const now = Date.now();
    const out: TradebillLine[] = [];
    const common = (order: OrderRecord) => ({
      appid: order.request.sp_appid,
      mchid: spMchid,
      subMchid,
      transactionId: order.transactionId ?? '',
      outTradeNo: order.request.out_trade_no,
      openid: order.payer?.sub_openid ?? order.payer?.sp_openid ?? '',
      tradeType: TRADE_TYPES[order.kind],
      description: order.request.description,
      attach: order.request.attach ?? '',
    });
    for (const order of store.ordersOf(spMchid, subMchid)) {
      if (order.successAt === undefined || shanghaiDay(order.successAt) !== day) continue;
      const { description } = order.request;
      if (description.includes(STATEMENT_OMIT)) continue;
      const total = order.request.amount.total + (description.includes(STATEMENT_AMOUNT_PLUS_ONE) ? 1 : 0);
      // A code payment its reverse gave back settles nothing: listed REVOKED, without a fee.
      const revoked = order.state === 'REVOKED';
      out.push({
        ...common(order),
        at: order.successAt,
        fee: revoked ? 0 : feeOf(total),
        entry: { kind: 'payment', total, ...(revoked ? { revoked } : {}) },
      });
    }
    for (const refund of store.refundsOf(spMchid, subMchid)) {
      if (shanghaiDay(refund.createdAt) !== day) continue;
      // Due but its timer not yet run: the statement sees it as a query would.
      if (now >= refund.processingSince + refundDelayMs) callbacks.settle(refund);
      const shown = (refund.request.reason ?? '').includes(STATEMENT_REFUND_PROCESSING)
        ? 'PROCESSING'
        : REFUND_STATES[refund.status];
      out.push({
        ...common(refund.order),
        at: refund.createdAt,
        fee: -feeOf(refund.request.amount.refund),
        entry: {
          kind: 'refund',
          refundId: refund.refundId,
          outRefundNo: refund.request.out_refund_no,
          refund: refund.request.amount.refund,
          refundStatus: shown,
        },
      });
    }
    return out.sort((a, b) => a.at - b.at);
  }

  router.get('/v3/bill/tradebill', async (req, res) => {
    const day = queryParam(req, 'bill_date');
    if (!DAY.test(day)) throw paramError('bill_date must be YYYY-MM-DD');
    const subMchid = queryParam(req, 'sub_mchid');
    const query = req.query as Record<string, unknown>;
    if ((query.bill_type ?? 'ALL') !== 'ALL') throw paramError('this sandbox serves bill_type ALL only');
    if ((query.tar_type ?? 'GZIP') !== 'GZIP') throw paramError('this sandbox serves tar_type GZIP only');
    if (controls.ask(day)) {
      throw new WechatpayError(400, 'STATEMENT_CREATING', '账单生成中，请稍后再试');
    }
    const listed = lines(subMchid, day);
    if (listed.length === 0) throw new WechatpayError(400, 'NO_STATEMENT_EXIST', '该日期无账单');
    const file = await tradebillFile(listed, controls.layout(subMchid));
    const token = randomBytes(36).toString('base64url');
    const now = Date.now();
    for (const [t, link] of links) if (link.expiresAt <= now) links.delete(t);
    links.set(token, {
      gzip: file.gzip,
      expiresAt: controls.takeExpired() ? now : now + STATEMENT_LINK_LIFETIME_MS,
    });
    logger.info('wechatpay sandbox statement made', {
      sub_mchid: subMchid,
      bill_date: day,
      lines: listed.length,
    });
    answer(res, 200, {
      hash_type: 'SHA1',
      hash_value: file.sha1,
      download_url: `${base}/v3/billdownload/file?token=${token}`,
    });
  });

  router.get('/v3/billdownload/file', (req, res) => {
    const token = queryParam(req, 'token');
    const link = links.get(token);
    if (!link || link.expiresAt <= Date.now()) {
      links.delete(token);
      throw new WechatpayError(400, 'INVALID_REQUEST', '下载链接已过期或不存在，请重新申请账单');
    }
    // The file is not signed, as WeChat's are not: the client checks it against hash_value.
    res.status(200).set('Content-Type', 'application/x-gzip').send(link.gzip);
  });
}
