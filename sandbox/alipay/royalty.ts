// Longer than 400 lines: one book, since settles, the shares refunds give back and unfreezes each
// check what the others took from the same trade.
/**
 * Royalty (商家分账): receivers bound to the app, and settle orders that move part of a paid trade
 * to them (the methods that reach them are in royalty-methods.ts). A settle is executed at once
 * (royalty_mode `sync`, the default) or after refundDelayMs (`async`, PROCESSING until then);
 * `[sandbox:settle-fail]` in a receiver's desc makes that detail FAIL. In memory, like the trades.
 */
import type { TradeRecord } from './store';
import { yuan } from './views';
import { beijingTime, businessFailed, fenOfNumber, invalidArgument, randomDigits } from './wire';

export type ReceiverType = 'userId' | 'loginName' | 'openId';
export type SettleState = 'SUCCESS' | 'PROCESSING' | 'FAIL';

export interface AlipaySandboxRelation {
  type: ReceiverType;
  account: string;
  name?: string;
  memo?: string;
  bound_at: string;
}

export interface SettleDetail {
  operation_type: 'transfer' | 'replenish';
  trans_in_type: string;
  trans_in: string;
  amount: string;
  desc?: string;
  state: SettleState;
  detail_id: string;
  execute_dt?: string;
  error_code?: string;
  error_desc?: string;
}

export interface AlipaySandboxSettlement {
  settle_no: string;
  out_request_no: string;
  trade_no: string;
  operation_dt: string;
  royalty_mode: 'sync' | 'async';
  /** The request's royalty_parameters, as sent. */
  royalty_parameters: RoyaltyParameter[];
  royalty_detail_list: SettleDetail[];
}

interface Settlement extends AlipaySandboxSettlement {
  /** The request's royalty_parameters as JSON, what a repeat must match. */
  identity: string;
  amounts: number[];
  createdAt: number;
}

export interface BindRequest {
  out_request_no: string;
  receiver_list: { type: ReceiverType; account: string; name?: string; memo?: string }[];
}

export interface RoyaltyParameter {
  royalty_type?: 'transfer' | 'replenish';
  trans_in_type: string;
  trans_in: string;
  amount: string | number;
  desc?: string;
}

export interface SettleRequest {
  out_request_no: string;
  trade_no: string;
  /** Absent only with extend_params.royalty_finish "true": the settle that only unfreezes. */
  royalty_parameters?: RoyaltyParameter[];
  royalty_mode?: 'sync' | 'async';
  operator_id?: string;
  extend_params?: Record<string, unknown>;
}

/** One entry of alipay.trade.refund's refund_royalty_parameters (退分账): who gives back how much. */
export interface RefundRoyaltyParameter {
  royalty_type?: 'transfer';
  trans_out_type?: ReceiverType;
  trans_out: string;
  trans_in_type?: string;
  trans_in?: string;
  amount: string | number;
  desc?: string;
}

/** A receiver's share given back with a refund, as the gateway keeps it (and tests count it). */
export interface AlipaySandboxRoyaltyReturn {
  trade_no: string;
  /** The refund's out_request_no. */
  out_request_no: string;
  trans_out_type: ReceiverType;
  trans_out: string;
  amount: string;
  returned_at: string;
}

/** A settle that only finished the royalty: what the trade froze for it, released to the seller. */
export interface AlipaySandboxUnfreeze {
  trade_no: string;
  out_request_no: string;
  settle_no: string;
  operation_dt: string;
}

const relationKey = (type: string, account: string) => `${type}\u0000${account}`;

export class RoyaltyBook {
  private readonly relations = new Map<string, AlipaySandboxRelation>();
  private readonly settlements = new Map<string, Settlement>();
  private readonly bySettleNo = new Map<string, Settlement>();
  /** Shares given back with refunds (退分账), oldest first: a table of their own. */
  private readonly royaltyReturns: (AlipaySandboxRoyaltyReturn & { fen: number })[] = [];
  /** Trades whose royalty was finished by a settle with royalty_finish, by trade_no. */
  private readonly finished = new Map<string, AlipaySandboxUnfreeze>();

  listRelations(): AlipaySandboxRelation[] {
    return [...this.relations.values()].map((r) => ({ ...r }));
  }

  /** A trade's settle orders as a query would see them now. */
  settlementsOf(tradeNo: string, now: number, delayMs: number): AlipaySandboxSettlement[] {
    return [...this.settlements.values()]
      .filter((s) => s.trade_no === tradeNo)
      .map((s) => view(this.advance(s, now, delayMs)));
  }

  bind(request: BindRequest, now: number): void {
    for (const r of request.receiver_list) {
      const key = relationKey(r.type, r.account);
      if (this.relations.has(key)) continue;
      this.relations.set(key, {
        type: r.type,
        account: r.account,
        ...(r.name === undefined ? {} : { name: r.name }),
        ...(r.memo === undefined ? {} : { memo: r.memo }),
        bound_at: beijingTime(now),
      });
    }
  }

  /** A trade's royalty returns, oldest first. */
  returnsOf(tradeNo: string): AlipaySandboxRoyaltyReturn[] {
    return this.royaltyReturns.filter((r) => r.trade_no === tradeNo).map(({ fen: _fen, ...r }) => ({ ...r }));
  }

  /** A trade's unfreeze (a settle with royalty_finish and no royalty_parameters), if it had one. */
  unfreezeOf(tradeNo: string): AlipaySandboxUnfreeze | undefined {
    const found = this.finished.get(tradeNo);
    return found && { ...found };
  }

  /**
   * The shares a refund gives back (refund_royalty_parameters), checked before the refund is
   * taken: each from an account this trade's settles paid (trans_out), never more than the
   * account received minus what earlier refunds took back from it. Answers them in fen, for
   * `recordReturns` once the refund is taken.
   */
  checkReturns(
    trade: TradeRecord,
    params: RefundRoyaltyParameter[],
  ): { param: RefundRoyaltyParameter; fen: number }[] {
    const asked = new Map<string, number>();
    return params.map((p, i) => {
      const fen = fenOfNumber(p.amount);
      if (fen === undefined || fen < 1) {
        throw invalidArgument(
          'isv.invalid-parameter',
          `参数无效 refund_royalty_parameters[${i}].amount: yuan, at least 0.01`,
        );
      }
      const type = p.trans_out_type ?? 'userId';
      const key = relationKey(type, p.trans_out);
      const received = this.receivedFen(trade.tradeNo, type, p.trans_out);
      if (received === 0) {
        throw businessFailed(
          'ACQ.INVALID_PARAMETER',
          `参数无效: refund_royalty_parameters[${i}].trans_out ${type} ${p.trans_out} received no royalty from trade ${trade.tradeNo}`,
        );
      }
      const returned = this.royaltyReturns
        .filter((r) => r.trade_no === trade.tradeNo && relationKey(r.trans_out_type, r.trans_out) === key)
        .reduce((sum, r) => sum + r.fen, 0);
      const total = (asked.get(key) ?? 0) + fen;
      asked.set(key, total);
      if (total > received - returned) {
        throw businessFailed(
          'ACQ.INVALID_PARAMETER',
          `参数无效: refund_royalty_parameters[${i}] returns ${yuan(total)} from ${p.trans_out}, which has ${yuan(received - returned)} of ${yuan(received)} left to return`,
        );
      }
      return { param: p, fen };
    });
  }

  recordReturns(
    tradeNo: string,
    outRequestNo: string,
    returns: { param: RefundRoyaltyParameter; fen: number }[],
    now: number,
  ): void {
    for (const { param, fen } of returns) {
      this.royaltyReturns.push({
        trade_no: tradeNo,
        out_request_no: outRequestNo,
        trans_out_type: param.trans_out_type ?? 'userId',
        trans_out: param.trans_out,
        amount: yuan(fen),
        returned_at: beijingTime(now),
        fen,
      });
    }
  }

  /** What the trade's settles paid an account: its SUCCESS details only. */
  private receivedFen(tradeNo: string, type: string, account: string): number {
    let sum = 0;
    for (const s of this.settlements.values()) {
      if (s.trade_no !== tradeNo) continue;
      s.royalty_detail_list.forEach((d, i) => {
        if (d.state === 'SUCCESS' && d.trans_in_type === type && d.trans_in === account) sum += s.amounts[i]!;
      });
    }
    return sum;
  }

  /**
   * 分账解冻 alone: a settle with royalty_finish and no royalty_parameters releases what a paid
   * trade froze for royalty. The same out_request_no answers the same unfreeze; a trade whose
   * royalty was finished already cannot be finished again.
   */
  unfreeze(trade: TradeRecord, request: SettleRequest, now: number): AlipaySandboxUnfreeze {
    const earlier = this.finished.get(trade.tradeNo);
    if (earlier) {
      if (earlier.out_request_no === request.out_request_no) return this.unfreezeOf(trade.tradeNo)!;
      throw businessFailed(
        'ACQ.TRADE_SETTLE_ERROR',
        `分账处理失败: the royalty of trade ${trade.tradeNo} was finished already by ${earlier.out_request_no}`,
      );
    }
    if (trade.paidAt === undefined) {
      throw businessFailed('ACQ.TRADE_STATUS_ERROR', `交易状态异常: a ${trade.status} trade froze nothing`);
    }
    const unfreeze = {
      trade_no: trade.tradeNo,
      out_request_no: request.out_request_no,
      settle_no: `${beijingTime(now).slice(0, 10).replaceAll('-', '')}${randomDigits(20)}`,
      operation_dt: beijingTime(now),
    };
    this.finished.set(trade.tradeNo, unfreeze);
    return this.unfreezeOf(trade.tradeNo)!;
  }

  settle(trade: TradeRecord, request: SettleRequest, refundedFen: number, now: number): Settlement {
    const key = `${request.trade_no}\u0000${request.out_request_no}`;
    const parameters = request.royalty_parameters ?? [];
    const identity = JSON.stringify(parameters);
    const existing = this.settlements.get(key);
    if (existing) {
      if (existing.identity !== identity) {
        throw businessFailed(
          'ACQ.DISCORDANT_REPEAT_REQUEST',
          `请求信息不一致: out_request_no ${request.out_request_no} was a settle of other receivers or amounts`,
        );
      }
      return existing;
    }
    if (trade.status !== 'TRADE_SUCCESS') {
      throw businessFailed(
        'ACQ.TRADE_STATUS_ERROR',
        `交易状态异常: a ${trade.status} trade cannot be settled`,
      );
    }
    const unfrozen = this.finished.get(trade.tradeNo);
    if (unfrozen) {
      throw businessFailed(
        'ACQ.TRADE_SETTLE_ERROR',
        `分账处理失败: the royalty of trade ${trade.tradeNo} was finished by ${unfrozen.out_request_no}; nothing is frozen to settle`,
      );
    }
    const amounts = parameters.map((p, i) => {
      const fen = fenOfNumber(p.amount);
      if (fen === undefined || fen < 1) {
        throw invalidArgument(
          'isv.invalid-parameter',
          `参数无效 royalty_parameters[${i}].amount: yuan, at least 0.01`,
        );
      }
      if (p.trans_in_type === 'cardAliasNo') {
        throw invalidArgument(
          'isv.invalid-parameter',
          '商家分账 takes Alipay accounts only, not cardAliasNo',
        );
      }
      if (!this.relations.has(relationKey(p.trans_in_type, p.trans_in))) {
        throw businessFailed(
          'ACQ.ROYALTY_RECEIVER_INVALID',
          `收入方不在分账关系内: ${p.trans_in_type} ${p.trans_in} was never bound (alipay.trade.royalty.relation.bind)`,
        );
      }
      return fen;
    });
    const available = trade.totalFen - refundedFen - this.settledFen(trade.tradeNo);
    const asked = amounts.reduce((a, b) => a + b, 0);
    if (asked > available) {
      throw businessFailed(
        'ACQ.ALLOC_AMOUNT_VALIDATE_ERROR',
        `分账金额超过最大可分账金额: ${yuan(asked)} asked, ${yuan(Math.max(0, available))} left to settle`,
      );
    }
    const mode = request.royalty_mode ?? 'sync';
    const settlement: Settlement = {
      settle_no: `${beijingTime(now).slice(0, 10).replaceAll('-', '')}${randomDigits(20)}`,
      out_request_no: request.out_request_no,
      trade_no: trade.tradeNo,
      operation_dt: beijingTime(now),
      royalty_mode: mode,
      royalty_parameters: structuredClone(parameters),
      royalty_detail_list: parameters.map((p, i) => ({
        operation_type: p.royalty_type ?? 'transfer',
        trans_in_type: p.trans_in_type,
        trans_in: p.trans_in,
        amount: yuan(amounts[i]!),
        ...(p.desc === undefined ? {} : { desc: p.desc }),
        state: 'PROCESSING',
        detail_id: `${beijingTime(now).slice(0, 10).replaceAll('-', '')}${randomDigits(20)}`,
      })),
      identity,
      amounts,
      createdAt: now,
    };
    this.settlements.set(key, settlement);
    this.bySettleNo.set(settlement.settle_no, settlement);
    if (mode === 'sync') execute(settlement, now);
    return settlement;
  }

  /** What a trade's settles took or are taking: every detail but the failed ones. */
  private settledFen(tradeNo: string): number {
    let sum = 0;
    for (const s of this.settlements.values()) {
      if (s.trade_no !== tradeNo) continue;
      s.royalty_detail_list.forEach((d, i) => {
        if (d.state !== 'FAIL') sum += s.amounts[i]!;
      });
    }
    return sum;
  }

  private find(query: {
    settle_no?: string;
    out_request_no?: string;
    trade_no?: string;
  }): Settlement | undefined {
    if (query.settle_no !== undefined) return this.bySettleNo.get(query.settle_no);
    return this.settlements.get(`${query.trade_no!}\u0000${query.out_request_no!}`);
  }

  /** A settle order as its query sees it now, or undefined. */
  query(
    ref: { settle_no?: string; out_request_no?: string; trade_no?: string },
    now: number,
    delayMs: number,
  ): AlipaySandboxSettlement | undefined {
    const found = this.find(ref);
    return found && view(this.advance(found, now, delayMs));
  }

  /** An asynchronous settle is executed once its delay has passed. */
  private advance(settlement: Settlement, now: number, delayMs: number): Settlement {
    if (now >= settlement.createdAt + delayMs) execute(settlement, now);
    return settlement;
  }
}

/** Every PROCESSING detail SUCCESS, or FAIL when its desc asks for it. */
function execute(settlement: Settlement, now: number): void {
  for (const detail of settlement.royalty_detail_list) {
    if (detail.state !== 'PROCESSING') continue;
    detail.execute_dt = beijingTime(now);
    if (detail.desc?.includes('[sandbox:settle-fail]')) {
      detail.state = 'FAIL';
      detail.error_code = 'TRANS_IN_ACCOUNT_STATUS_ERROR';
      detail.error_desc = '分账收入方账户状态异常 (fault injection: [sandbox:settle-fail])';
    } else {
      detail.state = 'SUCCESS';
    }
  }
}

function view(s: Settlement): AlipaySandboxSettlement {
  return {
    settle_no: s.settle_no,
    out_request_no: s.out_request_no,
    trade_no: s.trade_no,
    operation_dt: s.operation_dt,
    royalty_mode: s.royalty_mode,
    royalty_parameters: structuredClone(s.royalty_parameters),
    royalty_detail_list: s.royalty_detail_list.map((d) => ({ ...d })),
  };
}
