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
  royalty_parameters: RoyaltyParameter[];
  royalty_mode?: 'sync' | 'async';
  operator_id?: string;
  extend_params?: Record<string, unknown>;
}

const relationKey = (type: string, account: string) => `${type}\u0000${account}`;

export class RoyaltyBook {
  private readonly relations = new Map<string, AlipaySandboxRelation>();
  private readonly settlements = new Map<string, Settlement>();
  private readonly bySettleNo = new Map<string, Settlement>();

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

  settle(trade: TradeRecord, request: SettleRequest, refundedFen: number, now: number): Settlement {
    const key = `${request.trade_no}\u0000${request.out_request_no}`;
    const identity = JSON.stringify(request.royalty_parameters);
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
    const amounts = request.royalty_parameters.map((p, i) => {
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
      royalty_parameters: structuredClone(request.royalty_parameters),
      royalty_detail_list: request.royalty_parameters.map((p, i) => ({
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
