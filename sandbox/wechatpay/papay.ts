// Longer than 400 lines on purpose: one product's desk (contracts, notices, deductions and their
// rules) and its routes, read top to bottom; split, each half would export its internals.
/**
 * 委托代扣 as a service provider, offline: the 公众号 sign page (`GET /papay/partner/entrustweb`,
 * its query signed with the API v2 key; the buyer agrees with one button), the contract's v2
 * calls (`POST /papay/partner/querycontract`, `/papay/partner/deletecontract`), the deduction
 * (`POST /pay/partner/pappayapply`, accepted then settled a moment later; its outcome by
 * `POST /pay/partner/paporderquery`, by v2 XML to its notify_url, and, as for any order, by the v3
 * query, refund and statement), and the v3 pre-deduction notice
 * (`POST /v3/partner-papay/contracts/{contract_id}/notify`, 204).
 *
 * WeChat Pay's rules as published: a deduction only 07:00–22:00 China time, a day after a notice
 * of at least its amount (or within 12 h of the signature, without one), at most one taken a day
 * per contract, none under a contract not signed or unsigned. The contract's changes (signed,
 * unsigned by the buyer or the merchant) go as v2 XML (change_type ADD | DELETE) to the sign
 * page's notify_url, on WeChat's resending rhythm until answered return_code SUCCESS. Times of
 * the rules are the contract clock's (`clock`): on a time-scaled stack a day passes in seconds.
 *
 * Controls: a contract's next deductions fail for want of balance or lose their answer, its buyer
 * unsigns at once or as its next notice arrives, its notifications are lost.
 *
 * The XML and the v2 sign are ./wire-v2.ts's, on node:crypto alone.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { checkoutStyle, escapeHtml } from '../html';
import type { SandboxContext } from './context';
import { describeError, jsonBody, pageOrScriptBody, requirePartner } from './http';
import { CHECKOUT_CSP } from './pages';
import type { OrderRecord } from './store';
import { WechatpayError, randomAlphanumeric, randomDigits } from './wire';
import { buildV2Xml, cstCompact, cstDateTime, parseV2Xml, v2Sign, v2Verifies } from './wire-v2';

/** WeChat's resending rhythm for a v2 notification not answered SUCCESS (seconds). */
const V2_RETRY_DELAYS_MS = [15, 15, 30, 180, 1800, 1800, 1800, 1800, 3600].map((s) => s * 1000);
const NOTIFY_TIMEOUT_MS = 5_000;
const DAY_MS = 86_400_000;
const CST_MS = 8 * 3_600_000;
/** Deductions 07:00–22:00 China time. */
const WINDOW_MINUTES = [7 * 60, 22 * 60] as const;
/** A deduction within this long of the signature needs no notice. */
const UNNOTICED_AFTER_SIGNING_MS = 12 * 3_600_000;

export type PapaySteer = 'pays' | 'insufficient' | 'answer_lost';

export interface PapayNotice {
  amount: number;
  /** Contract-clock ms. */
  at: number;
  /** The deduction taken (or being taken) on it: a notice covers one deduction's retries. */
  usedBy?: string;
}

export interface PapayContract {
  contractId: string;
  contractCode: string;
  planId: string;
  subMchid: string;
  appid: string;
  displayAccount: string;
  notifyUrl: string;
  requestSerial: string;
  openid: string;
  state: 'active' | 'terminated';
  /** Real ms. */
  signedAt: number;
  terminatedAt?: number;
  /** 2: the buyer in WeChat; 3: the merchant's API. */
  terminationMode?: '2' | '3';
  terminationRemark?: string;
  notices: PapayNotice[];
}

export interface PapayDeduction {
  outTradeNo: string;
  contractId: string;
  /** The China day (contract clock) it was asked on. */
  day: string;
  steer: PapaySteer;
  failReason?: string;
}

/** What a test reads of a contract: its state and everything asked under it. */
export interface WechatpaySandboxPapayContract {
  contractId: string;
  state: 'active' | 'terminated';
  terminationMode?: string;
  notices: { amount: number; at: number }[];
  /** Deductions WeChat Pay took (SUCCESS or REFUND) by China day of the contract clock. */
  takenByDay: Record<string, number>;
  deductions: { outTradeNo: string; state: string; amount: number; day: string }[];
  /** pappayapply requests, refused and repeated ones included. */
  deductRequests: number;
  deleteRequests: number;
}

/** A deduction taken whose answer is lost (a control): the connection is dropped. */
class AnswerLost extends Error {}

/** v2 refusals: result_code FAIL with an err_code. */
class V2Fail extends Error {
  constructor(
    readonly errCode: string,
    readonly des: string,
  ) {
    super(`${errCode}: ${des}`);
  }
}

export interface PapayOptions {
  apiV2Key: string;
  planId: string;
  /** Where the router is mounted, as browsers reach it. */
  base: string;
  /** A real instant on the contract clock. */
  toClock(realMs: number): number;
  /** How long an accepted deduction takes to settle, timeScale applied. */
  settleMs: number;
  /** Multiplies notification retry delays. */
  scale: number;
  send: typeof fetch;
}

const chinaDay = (ms: number) => new Date(ms + CST_MS).toISOString().slice(0, 10);
const chinaMinute = (ms: number) => Math.floor(((((ms + CST_MS) % DAY_MS) + DAY_MS) % DAY_MS) / 60_000);

export class PapayDesk {
  private readonly contracts = new Map<string, PapayContract>();
  private readonly byCode = new Map<string, PapayContract>();
  private readonly offers = new Map<string, Record<string, string>>();
  readonly deductions = new Map<string, PapayDeduction>();
  private readonly steers = new Map<string, PapaySteer[]>();
  private readonly unsignAfterNotice = new Set<string>();
  private readonly lostNotifications = new Set<string>();
  readonly requests = new Map<string, { deduct: number; delete: number }>();

  constructor(
    private readonly ctx: SandboxContext,
    private readonly options: PapayOptions,
  ) {}

  private codeKey(subMchid: string, planId: string, code: string) {
    return `${subMchid}\u0000${planId}\u0000${code}`;
  }

  findByCode(code: string): PapayContract | undefined {
    return [...this.byCode.values()].reverse().find((c) => c.contractCode === code);
  }

  private count(code: string, what: 'deduct' | 'delete') {
    const n = this.requests.get(code) ?? { deduct: 0, delete: 0 };
    n[what] += 1;
    this.requests.set(code, n);
  }

  steer(code: string, steers: PapaySteer[]): void {
    this.steers.set(code, [...(this.steers.get(code) ?? []), ...steers]);
  }

  cancelAfterNotice(code: string): void {
    this.unsignAfterNotice.add(code);
  }

  loseNotifications(code: string): void {
    this.lostNotifications.add(code);
  }

  // ---- v2 notifications ----

  private deliver(
    url: string,
    fields: Record<string, string>,
    key: string,
    meta: Record<string, unknown>,
    attempt = 0,
  ) {
    const { logger, callbacks } = this.ctx;
    const body = buildV2Xml({ ...fields, sign: v2Sign(fields, this.options.apiV2Key) });
    callbacks.later(
      attempt === 0 ? 0 : V2_RETRY_DELAYS_MS[attempt - 1]! * this.options.scale,
      async () => {
        let outcome: string;
        try {
          const res = await this.options.send(url, {
            method: 'POST',
            headers: { 'Content-Type': 'text/xml', 'Request-ID': randomAlphanumeric(32) },
            body,
            redirect: 'manual',
            signal: AbortSignal.timeout(NOTIFY_TIMEOUT_MS),
          });
          const text = await res.text().catch(() => '');
          if (res.status === 200 && parseV2Xml(text)?.return_code === 'SUCCESS') {
            logger.info('wechatpay sandbox v2 notification acknowledged', { ...meta, attempt });
            return;
          }
          outcome = `HTTP ${res.status} ${text.slice(0, 80)}`;
        } catch (err) {
          outcome = describeError(err);
        }
        if (attempt >= V2_RETRY_DELAYS_MS.length) {
          logger.warn('wechatpay sandbox v2 notification given up', { ...meta, attempt, outcome });
          return;
        }
        logger.warn('wechatpay sandbox v2 notification not acknowledged', { ...meta, attempt, outcome });
        this.deliver(url, fields, key, meta, attempt + 1);
      },
      key,
    );
  }

  private notifyContract(c: PapayContract, change: 'ADD' | 'DELETE'): void {
    const meta = { change_type: change, contract_code: c.contractCode };
    if (this.lostNotifications.has(c.contractCode)) {
      this.ctx.logger.info('wechatpay sandbox contract notification dropped (fault injection)', meta);
      return;
    }
    const { keys } = this.ctx;
    this.deliver(
      c.notifyUrl,
      {
        return_code: 'SUCCESS',
        result_code: 'SUCCESS',
        mch_id: keys.spMchid,
        appid: keys.spAppid,
        sub_mch_id: c.subMchid,
        contract_code: c.contractCode,
        plan_id: c.planId,
        openid: c.openid,
        change_type: change,
        operate_time: cstDateTime(change === 'ADD' ? c.signedAt : c.terminatedAt!),
        contract_id: c.contractId,
        contract_expired_time: cstDateTime(c.signedAt + 5 * 365 * DAY_MS),
        request_serial: c.requestSerial,
        contract_display_account: c.displayAccount,
        contract_state: c.state === 'active' ? '0' : '1',
        contract_signed_time: cstDateTime(c.signedAt),
        ...(c.state === 'terminated'
          ? {
              contract_terminated_time: cstDateTime(c.terminatedAt!),
              contract_termination_mode: c.terminationMode!,
              contract_termination_remark: c.terminationRemark ?? '',
            }
          : {}),
      },
      c.contractCode,
      meta,
    );
  }

  private notifyDeduction(order: OrderRecord, d: PapayDeduction): void {
    const url = order.request.notify_url;
    if (url === undefined) return;
    this.deliver(url, { ...this.orderFields(order, d) }, order.request.out_trade_no, {
      event: 'pap deduction',
      out_trade_no: order.request.out_trade_no,
    });
  }

  // ---- signing ----

  /** The sign page's offer, its query's sign checked; a token the page's button posts. */
  offer(query: Record<string, string>): { token: string; contract?: PapayContract } {
    const { keys } = this.ctx;
    for (const field of [
      'appid',
      'mch_id',
      'sub_mch_id',
      'plan_id',
      'contract_code',
      'request_serial',
      'contract_display_account',
      'notify_url',
      'version',
      'timestamp',
      'sign',
    ]) {
      if (!query[field]) throw new V2Fail('PARAM_ERROR', `缺少参数 ${field}`);
    }
    if (!v2Verifies(query, this.options.apiV2Key)) throw new V2Fail('SIGNERROR', '签名错误');
    if (query.mch_id !== keys.spMchid || query.appid !== keys.spAppid) {
      throw new V2Fail('PARAM_ERROR', 'appid 与 mch_id 不匹配');
    }
    if (query.plan_id !== this.options.planId) throw new V2Fail('PLAN_NOT_EXIST', '模板不存在');
    const existing = this.byCode.get(this.codeKey(query.sub_mch_id!, query.plan_id!, query.contract_code!));
    const token = randomBytes(18).toString('base64url');
    this.offers.set(token, query);
    return existing?.state === 'active' ? { token, contract: existing } : { token };
  }

  /** The buyer agrees: the contract is signed (once per contract_code) and its ADD sent. */
  sign(token: string): PapayContract {
    const q = this.offers.get(token);
    if (!q) throw new V2Fail('PARAM_ERROR', '签约页面已失效');
    const key = this.codeKey(q.sub_mch_id!, q.plan_id!, q.contract_code!);
    const existing = this.byCode.get(key);
    if (existing?.state === 'active') return existing;
    const c: PapayContract = {
      contractId: `Wx${randomDigits(26)}`,
      contractCode: q.contract_code!,
      planId: q.plan_id!,
      subMchid: q.sub_mch_id!,
      appid: q.appid!,
      displayAccount: q.contract_display_account!,
      notifyUrl: q.notify_url!,
      requestSerial: q.request_serial!,
      openid: `o${randomAlphanumeric(27)}`,
      state: 'active',
      signedAt: Date.now(),
      notices: [],
    };
    this.contracts.set(c.contractId, c);
    this.byCode.set(key, c);
    this.ctx.logger.info('wechatpay sandbox contract signed', { contract_code: c.contractCode });
    this.notifyContract(c, 'ADD');
    return c;
  }

  /** Unsigned by the buyer (mode 2) or the merchant's API (3); its DELETE sent. Once. */
  terminate(c: PapayContract, mode: '2' | '3', remark: string): void {
    if (c.state === 'terminated') return;
    c.state = 'terminated';
    c.terminatedAt = Date.now();
    c.terminationMode = mode;
    c.terminationRemark = remark;
    this.ctx.logger.info('wechatpay sandbox contract unsigned', { contract_code: c.contractCode, mode });
    this.notifyContract(c, 'DELETE');
  }

  // ---- the v2 calls ----

  private contractOf(f: Record<string, string>): PapayContract {
    const c = f.contract_id
      ? this.contracts.get(f.contract_id)
      : this.byCode.get(this.codeKey(f.sub_mch_id ?? '', f.plan_id ?? '', f.contract_code ?? ''));
    if (!c || c.subMchid !== f.sub_mch_id) throw new V2Fail('CONTRACT_NOT_EXIST', '签约协议不存在');
    if (f.contract_code && c.contractCode !== f.contract_code)
      throw new V2Fail('CONTRACT_NOT_EXIST', '签约协议不存在');
    return c;
  }

  contractFields(c: PapayContract): Record<string, string> {
    return {
      sub_mch_id: c.subMchid,
      contract_id: c.contractId,
      plan_id: c.planId,
      contract_code: c.contractCode,
      contract_display_account: c.displayAccount,
      contract_state: c.state === 'active' ? '0' : '1',
      contract_signed_time: cstDateTime(c.signedAt),
      contract_expired_time: cstDateTime(c.signedAt + 5 * 365 * DAY_MS),
      openid: c.openid,
      ...(c.state === 'terminated'
        ? {
            contract_terminated_time: cstDateTime(c.terminatedAt!),
            contract_termination_mode: c.terminationMode!,
            contract_termination_remark: c.terminationRemark ?? '',
          }
        : {}),
    };
  }

  queryContract(f: Record<string, string>): Record<string, string> {
    if (!f.contract_id && !(f.plan_id && f.contract_code)) {
      throw new V2Fail('PARAM_ERROR', 'contract_id 或 plan_id+contract_code 必填');
    }
    return this.contractFields(this.contractOf(f));
  }

  deleteContract(f: Record<string, string>): Record<string, string> {
    if (!f.contract_termination_remark)
      throw new V2Fail('PARAM_ERROR', '缺少参数 contract_termination_remark');
    const c = this.contractOf(f);
    this.count(c.contractCode, 'delete');
    if (c.state === 'terminated') throw new V2Fail('CONTRACT_TERMINATED', '协议已解约');
    this.terminate(c, '3', f.contract_termination_remark);
    return {
      sub_mch_id: c.subMchid,
      contract_id: c.contractId,
      plan_id: c.planId,
      contract_code: c.contractCode,
    };
  }

  /** 预扣费通知: recorded on the contract; the buyer may unsign as it arrives (a control). */
  notice(contractId: string, subMchid: string, amount: number): void {
    const c = this.contracts.get(contractId);
    if (!c || c.subMchid !== subMchid) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '签约协议不存在');
    if (c.state !== 'active') throw new WechatpayError(400, 'CONTRACT_TERMINATED', '协议已解约');
    c.notices.push({ amount, at: this.options.toClock(Date.now()) });
    if (this.unsignAfterNotice.delete(c.contractCode)) {
      // The buyer reads the notice and unsigns before the deduction.
      this.ctx.callbacks.later(0, () => this.terminate(c, '2', '用户解约'), c.contractCode);
    }
  }

  deduct(f: Record<string, string>): Record<string, string> {
    const { store } = this.ctx;
    for (const field of [
      'body',
      'out_trade_no',
      'total_fee',
      'spbill_create_ip',
      'notify_url',
      'trade_type',
      'contract_id',
    ]) {
      if (!f[field]) throw new V2Fail('PARAM_ERROR', `缺少参数 ${field}`);
    }
    if (f.trade_type !== 'PAP') throw new V2Fail('PARAM_ERROR', 'trade_type 须为 PAP');
    const total = Number(f.total_fee);
    if (!/^\d{1,10}$/.test(f.total_fee!) || total < 1) throw new V2Fail('PARAM_ERROR', 'total_fee 无效');
    const c = this.contracts.get(f.contract_id!);
    if (c) this.count(c.contractCode, 'deduct');
    const earlier = store.peekOrder(this.ctx.keys.spMchid, f.out_trade_no!);
    if (earlier) {
      const d = this.deductions.get(f.out_trade_no!);
      if (!d || d.contractId !== f.contract_id || earlier.request.amount.total !== total) {
        throw new V2Fail('PARAM_ERROR', '201 商户订单号重复');
      }
      if (earlier.state === 'SUCCESS' || earlier.state === 'REFUND')
        throw new V2Fail('ORDERPAID', '订单已支付');
      if (earlier.state === 'PAYERROR' || earlier.state === 'CLOSED')
        throw new V2Fail('ORDERCLOSED', '订单已关闭');
      return { sub_mch_id: earlier.request.sub_mchid };
    }
    if (!c || c.subMchid !== f.sub_mch_id) throw new V2Fail('CONTRACT_NOT_EXIST', '签约协议不存在');
    if (c.state !== 'active') throw new V2Fail('CONTRACT_NOT_EXIST', '签约协议已解约');
    const now = this.options.toClock(Date.now());
    const minute = chinaMinute(now);
    if (minute < WINDOW_MINUTES[0] || minute >= WINDOW_MINUTES[1]) {
      throw new V2Fail('RULELIMIT', '不在可扣费时间段内（北京时间 7:00~22:00）');
    }
    const signedAt = this.options.toClock(c.signedAt);
    const notice = c.notices.at(-1);
    const fresh = now - signedAt < UNNOTICED_AFTER_SIGNING_MS && notice === undefined;
    if (!fresh) {
      if (!notice || notice.amount < total)
        throw new V2Fail('RULELIMIT', '未发送预扣费通知，或扣款金额超过预计扣费金额');
      if (notice.usedBy && this.takenOrPending(notice.usedBy)) {
        throw new V2Fail('RULELIMIT', '预扣费通知已用于一笔扣款，请重新发送预扣费通知');
      }
      if (now - notice.at < DAY_MS) throw new V2Fail('RULELIMIT', '预扣费通知后须等待扣费等待期');
    }
    const day = chinaDay(now);
    const today = [...this.deductions.values()].filter(
      (d) => d.contractId === c.contractId && d.day === day && this.takenOrPending(d.outTradeNo),
    );
    if (today.length > 0) throw new V2Fail('RULELIMIT', '超过扣款规则限制：每天最多扣款一次');
    const steer = this.steers.get(c.contractCode)?.shift() ?? 'pays';
    const { order } = store.createOrder(
      'pap',
      {
        sp_appid: f.appid!,
        sp_mchid: f.mch_id!,
        sub_mchid: c.subMchid,
        description: f.body!,
        out_trade_no: f.out_trade_no!,
        notify_url: f.notify_url!,
        amount: { total, currency: 'CNY' },
        payer: { sp_openid: c.openid },
      },
      undefined,
      Date.now(),
    );
    const d: PapayDeduction = { outTradeNo: f.out_trade_no!, contractId: c.contractId, day, steer };
    this.deductions.set(d.outTradeNo, d);
    if (notice) notice.usedBy = d.outTradeNo;
    this.ctx.logger.info('wechatpay sandbox deduction accepted', { out_trade_no: d.outTradeNo, steer });
    this.ctx.callbacks.later(this.options.settleMs, () => this.settle(order, d), d.outTradeNo);
    if (steer === 'answer_lost') throw new AnswerLost();
    return { sub_mch_id: c.subMchid };
  }

  private settle(order: OrderRecord, d: PapayDeduction): void {
    if (order.state !== 'NOTPAY') return;
    const c = this.contracts.get(d.contractId);
    if (d.steer === 'insufficient' || c?.state !== 'active') {
      order.state = 'PAYERROR';
      d.failReason = c?.state !== 'active' ? '签约协议已解约' : '用户账户余额不足';
      this.ctx.logger.info('wechatpay sandbox deduction failed', {
        out_trade_no: d.outTradeNo,
        reason: d.failReason,
      });
      return;
    }
    this.ctx.store.buyerActs(order, 'pay', Date.now());
    this.ctx.logger.info('wechatpay sandbox deduction taken', { out_trade_no: d.outTradeNo });
    this.notifyDeduction(order, d);
  }

  private takenOrPending(outTradeNo: string): boolean {
    const order = this.ctx.store.peekOrder(this.ctx.keys.spMchid, outTradeNo);
    return order !== undefined && ['SUCCESS', 'REFUND', 'NOTPAY'].includes(order.state);
  }

  orderFields(order: OrderRecord, d: PapayDeduction): Record<string, string> {
    const paid = order.state === 'SUCCESS' || order.state === 'REFUND';
    return {
      return_code: 'SUCCESS',
      result_code: 'SUCCESS',
      appid: order.request.sp_appid,
      mch_id: order.request.sp_mchid,
      sub_mch_id: order.request.sub_mchid,
      nonce_str: randomAlphanumeric(32),
      openid: order.payer?.sp_openid ?? '',
      trade_type: 'PAP',
      trade_state: order.state === 'NOTPAY' ? 'ACCEPT' : order.state,
      trade_state_desc:
        d.failReason ?? (paid ? '支付成功' : order.state === 'NOTPAY' ? '已接收，等待扣款' : order.state),
      bank_type: 'OTHERS',
      total_fee: String(order.request.amount.total),
      fee_type: 'CNY',
      out_trade_no: order.request.out_trade_no,
      contract_id: d.contractId,
      ...(paid
        ? {
            cash_fee: String(order.request.amount.total),
            transaction_id: order.transactionId!,
            time_end: cstCompact(order.successAt!),
          }
        : {}),
    };
  }

  queryDeduction(f: Record<string, string>): Record<string, string> {
    const outTradeNo = f.out_trade_no ?? '';
    const order = this.ctx.store.peekOrder(this.ctx.keys.spMchid, outTradeNo);
    const d = this.deductions.get(outTradeNo);
    if (!order || !d || order.request.sub_mchid !== f.sub_mch_id)
      throw new V2Fail('ORDERNOTEXIST', '订单不存在');
    const { return_code: _r, result_code: _c, ...fields } = this.orderFields(order, d);
    return fields;
  }

  view(code: string): WechatpaySandboxPapayContract | undefined {
    const c = this.findByCode(code);
    if (!c) return undefined;
    const mine = [...this.deductions.values()].filter((d) => d.contractId === c.contractId);
    const deductions = mine.map((d) => {
      const order = this.ctx.store.peekOrder(this.ctx.keys.spMchid, d.outTradeNo)!;
      return { outTradeNo: d.outTradeNo, state: order.state, amount: order.request.amount.total, day: d.day };
    });
    const takenByDay: Record<string, number> = {};
    for (const d of deductions) {
      if (d.state === 'SUCCESS' || d.state === 'REFUND') takenByDay[d.day] = (takenByDay[d.day] ?? 0) + 1;
    }
    const n = this.requests.get(code) ?? { deduct: 0, delete: 0 };
    return {
      contractId: c.contractId,
      state: c.state,
      ...(c.terminationMode ? { terminationMode: c.terminationMode } : {}),
      notices: c.notices.map(({ amount, at }) => ({ amount, at })),
      takenByDay,
      deductions,
      deductRequests: n.deduct,
      deleteRequests: n.delete,
    };
  }

  /** The v2 answer of a call: SUCCESS with the fields, or result_code FAIL, signed either way. */
  answer(res: Response, request: Record<string, string>, run: () => Record<string, string>): void {
    const { keys } = this.ctx;
    let fields: Record<string, string>;
    try {
      fields = { result_code: 'SUCCESS', ...run() };
    } catch (err) {
      if (!(err instanceof V2Fail)) throw err;
      fields = { result_code: 'FAIL', err_code: err.errCode, err_code_des: err.des };
    }
    const signed: Record<string, string> = {
      return_code: 'SUCCESS',
      return_msg: 'OK',
      appid: keys.spAppid,
      mch_id: keys.spMchid,
      nonce_str: randomAlphanumeric(32),
      ...fields,
    };
    const type = request.sign_type === 'HMAC-SHA256' ? 'HMAC-SHA256' : 'MD5';
    sendXml(res, buildV2Xml({ ...signed, sign: v2Sign(signed, this.options.apiV2Key, type) }));
  }
}

function sendXml(res: Response, xml: string): void {
  res.status(200).type('text/xml').send(xml);
}

/** return_code FAIL: the request itself is wrong (unsigned, as WeChat Pay answers it). */
function returnFail(res: Response, msg: string): void {
  sendXml(res, buildV2Xml({ return_code: 'FAIL', return_msg: msg }));
}

/** The v2 request's fields, its sign and merchant checked; undefined once answered FAIL. */
function v2Request(
  req: Request,
  res: Response,
  ctx: SandboxContext,
  key: string,
): Record<string, string> | undefined {
  const fields = parseV2Xml((req.rawBody ?? Buffer.alloc(0)).toString('utf8'));
  if (!fields) {
    returnFail(res, 'XML格式错误');
    return undefined;
  }
  if (!v2Verifies(fields, key)) {
    returnFail(res, '签名错误');
    return undefined;
  }
  if (fields.mch_id !== ctx.keys.spMchid || fields.appid !== ctx.keys.spAppid) {
    returnFail(res, 'appid 与 mch_id 不匹配');
    return undefined;
  }
  return fields;
}

const PAGE_STYLE = checkoutStyle('#07c160');

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="zh-CN">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head>
<body><h1>durapay WeChat Pay sandbox: ${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}

export function papayRoutes(
  router: Router,
  ctx: SandboxContext,
  desk: PapayDesk,
  options: PapayOptions,
): void {
  const key = options.apiV2Key;

  router.get('/papay/partner/entrustweb', (req, res) => {
    res.set('Content-Security-Policy', CHECKOUT_CSP).set('Cache-Control', 'no-store');
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.query as Record<string, unknown>)) {
      if (typeof v === 'string') query[k] = v;
    }
    try {
      const { token, contract } = desk.offer(query);
      if (contract) {
        res
          .type('html')
          .send(
            page(
              '已签约',
              `<p>该协议已签约（contract_id <code>${escapeHtml(contract.contractId)}</code>）。</p>`,
            ),
          );
        return;
      }
      res.type('html').send(
        page(
          '开通自动扣费',
          `<p>${escapeHtml(query.contract_display_account ?? '')}</p>
<dl><dt>plan_id</dt><dd>${escapeHtml(query.plan_id ?? '')}</dd><dt>contract_code</dt><dd>${escapeHtml(query.contract_code ?? '')}</dd><dt>sub_mch_id</dt><dd>${escapeHtml(query.sub_mch_id ?? '')}</dd></dl>
<form method="post" action="${escapeHtml(`${options.base}/papay/partner/entrustweb/sign`)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<button class="pay" type="submit">同意并开通</button>
</form>`,
        ),
      );
    } catch (err) {
      if (!(err instanceof V2Fail)) throw err;
      res
        .status(400)
        .type('html')
        .send(page('签约失败', `<p>${escapeHtml(err.message)}</p>`));
    }
  });

  router.post('/papay/partner/entrustweb/sign', (req, res) => {
    const { body, fromPage } = pageOrScriptBody(req);
    const token =
      typeof (body as { token?: unknown }).token === 'string' ? (body as { token: string }).token : '';
    try {
      const c = desk.sign(token);
      if (!fromPage) {
        res.status(200).json({ contract_id: c.contractId, contract_code: c.contractCode });
        return;
      }
      res
        .set('Content-Security-Policy', CHECKOUT_CSP)
        .type('html')
        .send(
          page('签约成功', `<p>已开通自动扣费（contract_id <code>${escapeHtml(c.contractId)}</code>）。</p>`),
        );
    } catch (err) {
      if (!(err instanceof V2Fail)) throw err;
      res
        .status(400)
        .type(fromPage ? 'html' : 'json')
        .send(
          fromPage
            ? page('签约失败', `<p>${escapeHtml(err.message)}</p>`)
            : { code: err.errCode, message: err.des },
        );
    }
  });

  const v2 = (path: string, run: (f: Record<string, string>) => Record<string, string>) => {
    router.post(path, (req, res) => {
      const fields = v2Request(req, res, ctx, key);
      if (!fields) return;
      try {
        desk.answer(res, fields, () => run(fields));
      } catch (err) {
        // Taken, and the caller hears nothing.
        if (!(err instanceof AnswerLost)) throw err;
        req.socket.destroy();
      }
    });
  };
  v2('/papay/partner/querycontract', (f) => desk.queryContract(f));
  v2('/papay/partner/deletecontract', (f) => desk.deleteContract(f));
  v2('/pay/partner/pappayapply', (f) => desk.deduct(f));
  v2('/pay/partner/paporderquery', (f) => desk.queryDeduction(f));

  router.post('/v3/partner-papay/contracts/:contract_id/notify', (req, res) => {
    const body = jsonBody(req) as {
      sp_mchid?: unknown;
      sp_appid?: unknown;
      sub_mchid?: unknown;
      estimated_amount?: { amount?: unknown; currency?: unknown };
    };
    if (
      typeof body.sp_mchid !== 'string' ||
      typeof body.sub_mchid !== 'string' ||
      typeof body.sp_appid !== 'string'
    ) {
      throw new WechatpayError(400, 'PARAM_ERROR', 'sp_mchid, sp_appid 与 sub_mchid 必填');
    }
    requirePartner(res, { sp_mchid: body.sp_mchid, sp_appid: body.sp_appid }, ctx.keys.spAppid);
    const amount = body.estimated_amount?.amount;
    if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1) {
      throw new WechatpayError(400, 'PARAM_ERROR', 'estimated_amount.amount 须为正整数（分）');
    }
    desk.notice(req.params.contract_id!, body.sub_mchid, amount);
    ctx.answer(res, 204);
  });
}
