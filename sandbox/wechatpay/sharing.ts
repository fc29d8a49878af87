// Longer than 400 lines on purpose: sharing, unfreeze and return orders share one ledger and its checks.
/**
 * The WeChat Pay sandbox's profit sharing (分账, partner mode): the receivers each sub-merchant
 * added, and the sharing and unfreeze orders by sub_mchid + out_order_no, with the checks WeChat
 * makes before it moves frozen funds and the only transition a sharing order has (PROCESSING →
 * FINISHED, each receiver PENDING → SUCCESS or CLOSED). In memory, as the orders of store.ts are;
 * the views at the end are the JSON the endpoints answer and what the sandbox's readers return.
 *
 * Longer than 300 lines: the request and record types, the checks and the one transition, and the
 * JSON views of them are one model, as in store.ts; split, each part would export its internals.
 */
import type { OrderRecord } from './store';
import { WechatpayError, randomDigits, rfc3339Cst } from './wire';

export type ReceiverType = 'MERCHANT_ID' | 'PERSONAL_OPENID' | 'PERSONAL_SUB_OPENID';
export type RelationType =
  | 'SERVICE_PROVIDER'
  | 'STORE'
  | 'STAFF'
  | 'STORE_OWNER'
  | 'PARTNER'
  | 'HEADQUARTER'
  | 'BRAND'
  | 'DISTRIBUTOR'
  | 'USER'
  | 'SUPPLIER'
  | 'CUSTOM';
export type SharingState = 'PROCESSING' | 'FINISHED';
export type SharingResult = 'PENDING' | 'SUCCESS' | 'CLOSED';

export const RECEIVER_TYPES: readonly ReceiverType[] = [
  'MERCHANT_ID',
  'PERSONAL_OPENID',
  'PERSONAL_SUB_OPENID',
];
export const RELATION_TYPES: readonly RelationType[] = [
  'SERVICE_PROVIDER',
  'STORE',
  'STAFF',
  'STORE_OWNER',
  'PARTNER',
  'HEADQUARTER',
  'BRAND',
  'DISTRIBUTOR',
  'USER',
  'SUPPLIER',
  'CUSTOM',
];

/** The add-receiver body, as validated by the router; `name` still sealed. */
export interface AddReceiverRequest {
  sub_mchid: string;
  appid: string;
  sub_appid?: string;
  type: ReceiverType;
  account: string;
  name?: string;
  relation_type: RelationType;
  custom_relation?: string;
}

export interface CreateSharingRequest {
  sub_mchid: string;
  appid: string;
  sub_appid?: string;
  transaction_id: string;
  out_order_no: string;
  receivers: { type: ReceiverType; account: string; name?: string; amount: number; description: string }[];
  unfreeze_unsplit: boolean;
}

export interface UnfreezeRequest {
  sub_mchid: string;
  transaction_id: string;
  out_order_no: string;
  description: string;
}

export interface CreateReturnRequest {
  sub_mchid: string;
  order_id?: string;
  out_order_no?: string;
  out_return_no: string;
  return_mchid: string;
  amount: number;
  description: string;
}

export type ReturnResult = 'PROCESSING' | 'SUCCESS' | 'FAILED';

/** A return order (分账回退) as the sandbox keeps it, and as `returns()` shows it to tests. */
export interface WechatpaySandboxReturn {
  out_order_no: string;
  out_return_no: string;
  return_id: string;
  return_mchid: string;
  amount: number;
  description: string;
  result: ReturnResult;
  fail_reason?: string;
}

/** An unfreeze order (解冻剩余资金), as `unfreezes()` shows it to tests. */
export interface WechatpaySandboxUnfreeze {
  out_order_no: string;
  order_id: string;
  description: string;
  state: SharingState;
}

export interface ReturnRecord extends WechatpaySandboxReturn {
  spMchid: string;
  subMchid: string;
  transactionId: string;
  orderId: string;
  identity: string;
  /** What PROCESSING turns into: SUCCESS unless the description injects a fault. */
  outcome: Exclude<ReturnResult, 'PROCESSING'>;
  createdAt: number;
  finishedAt?: number;
}

/** WeChat Pay takes at most 20 returns from one sharing order. */
const MAX_RETURNS_PER_ORDER = 20;
const RETURN_PROCESSING_MARKER = '[sandbox:return-processing]';
const RETURN_FAILED_MARKER = '[sandbox:return-failed]';

/** A receiver as added, its name decrypted: what a test checks the client sealed. */
export interface WechatpaySandboxReceiver {
  type: ReceiverType;
  account: string;
  name?: string;
  relation_type: RelationType;
  custom_relation?: string;
}

/** A transaction's sharing as the sandbox sees it now; unfreeze orders show only as `unfrozen`. */
export interface WechatpaySandboxSharing {
  orders: {
    out_order_no: string;
    state: SharingState;
    receivers: {
      type: ReceiverType;
      account: string;
      amount: number;
      result: SharingResult;
      fail_reason?: string;
    }[];
  }[];
  unfrozen: boolean;
}

interface SharedReceiver {
  type: ReceiverType;
  account: string;
  amount: number;
  description: string;
  detailId: string;
  result: SharingResult;
  /** What PENDING turns into: SUCCESS unless the description injects a fault. */
  outcome: Exclude<SharingResult, 'PENDING'>;
  finishedAt?: number;
}

export interface SharingOrderRecord {
  kind: 'share' | 'unfreeze';
  spMchid: string;
  subMchid: string;
  transactionId: string;
  outOrderNo: string;
  orderId: string;
  /** The fields whose change makes a repeat with this out_order_no a different order. */
  identity: string;
  /** A sharing order's unfreeze_unsplit; always true for an unfreeze order. */
  unfreezes: boolean;
  /** An unfreeze order's description. */
  description?: string;
  state: SharingState;
  receivers: SharedReceiver[];
  createdAt: number;
}

/** Why a receiver's share was CLOSED; the only fault the sandbox injects into sharing. */
const FAIL_REASON = 'ACCOUNT_ABNORMAL';

/** 400 INVALID_REQUEST: well-formed, but not allowed in the state things are in. */
function invalid(message: string): WechatpayError {
  return new WechatpayError(400, 'INVALID_REQUEST', message);
}

function key(...parts: string[]): string {
  return parts.join('\u0000');
}

export class WechatpaySharingStore {
  private readonly receivers = new Map<string, Map<string, WechatpaySandboxReceiver>>();
  private readonly orders = new Map<string, SharingOrderRecord>();
  private readonly byTransactionId = new Map<string, SharingOrderRecord[]>();
  /** Return orders by sub_mchid + out_return_no: a table of their own, as WeChat keeps them. */
  private readonly returnOrders = new Map<string, ReturnRecord>();

  /**
   * `delayMs`: how long a sharing order stays PROCESSING; `returnDelayMs`: a return kept
   * PROCESSING by its description. A read after that settles it.
   */
  constructor(
    private readonly delayMs: number,
    private readonly returnDelayMs: number = delayMs,
  ) {}

  /** Adds or, for one already added, replaces a receiver: adding again is not an error. */
  addReceiver(request: AddReceiverRequest, name: string | undefined): WechatpaySandboxReceiver {
    const { type, account, relation_type: relationType, custom_relation: customRelation } = request;
    const receiver: WechatpaySandboxReceiver = {
      type,
      account,
      ...(name === undefined ? {} : { name }),
      relation_type: relationType,
      ...(customRelation === undefined ? {} : { custom_relation: customRelation }),
    };
    let added = this.receivers.get(request.sub_mchid);
    if (!added) this.receivers.set(request.sub_mchid, (added = new Map()));
    added.set(key(type, account), receiver);
    return receiver;
  }

  listReceivers(subMchid: string): WechatpaySandboxReceiver[] {
    return [...(this.receivers.get(subMchid)?.values() ?? [])].map((r) => ({ ...r }));
  }

  /**
   * The sharing order and whether this call created it. `order` is the paid transaction the
   * router found for this sp_mchid and sub_mchid, if any; `names` the receivers' decrypted names.
   */
  createSharing(
    spMchid: string,
    request: CreateSharingRequest,
    names: (string | undefined)[],
    order: OrderRecord | undefined,
    now: number,
  ) {
    const identity = JSON.stringify([
      'share',
      request.transaction_id,
      request.appid,
      request.sub_appid ?? null,
      request.receivers.map((r) => [r.type, r.account, r.amount, r.description]),
      request.unfreeze_unsplit,
    ]);
    const existing = this.repeated(spMchid, request.sub_mchid, request.out_order_no, identity, now);
    if (existing) return { sharing: existing, created: false };
    const paid = this.sharable(order, request.transaction_id, request.sub_mchid);
    const added = this.receivers.get(request.sub_mchid);
    const seen = new Set<string>();
    request.receivers.forEach((r, i) => {
      const receiver = added?.get(key(r.type, r.account));
      if (!receiver)
        throw invalid(`分账接收方未添加: ${r.type} ${r.account} was not added for this sub_mchid`);
      if (seen.has(key(r.type, r.account))) throw invalid(`分账接收方重复: ${r.type} ${r.account}`);
      seen.add(key(r.type, r.account));
      const name = names[i];
      if (name !== undefined && receiver.name !== undefined && name !== receiver.name) {
        throw invalid(
          `分账接收方全称不匹配: receivers[${i}].name is not the name ${r.account} was added with`,
        );
      }
    });
    const asked = request.receivers.reduce((sum, r) => sum + r.amount, 0);
    const remaining = (paid.payerTotal ?? paid.request.amount.total) - this.shared(request.transaction_id);
    if (asked > remaining) {
      throw new WechatpayError(400, 'NOT_ENOUGH', `分账金额不足: ${asked} asked, ${remaining} left to share`);
    }
    const sharing: SharingOrderRecord = {
      ...this.newOrder('share', spMchid, request, identity, now),
      unfreezes: request.unfreeze_unsplit,
      state: 'PROCESSING',
      receivers: request.receivers.map((r) => ({
        type: r.type,
        account: r.account,
        amount: r.amount,
        description: r.description,
        detailId: `36${randomDigits(21)}`,
        result: 'PENDING',
        outcome: r.description.includes('[sandbox:share-closed]') ? 'CLOSED' : 'SUCCESS',
      })),
    };
    this.keep(sharing);
    return { sharing, created: true };
  }

  /**
   * Unfreezes what is left of a transaction to its sub-merchant: PROCESSING first, as WeChat Pay
   * answers (解冻剩余资金 is asynchronous), FINISHED once the sandbox's delay has passed.
   */
  unfreeze(spMchid: string, request: UnfreezeRequest, order: OrderRecord | undefined, now: number) {
    const identity = JSON.stringify(['unfreeze', request.transaction_id, request.description]);
    const existing = this.repeated(spMchid, request.sub_mchid, request.out_order_no, identity, now);
    if (existing) return { sharing: existing, created: false };
    this.sharable(order, request.transaction_id, request.sub_mchid);
    const sharing: SharingOrderRecord = {
      ...this.newOrder('unfreeze', spMchid, request, identity, now),
      unfreezes: true,
      description: request.description,
      state: 'PROCESSING',
      receivers: [],
    };
    this.keep(sharing);
    return { sharing, created: true };
  }

  /** The order, if it belongs to that sp_mchid, sub_mchid and transaction; settled when due. */
  findSharing(spMchid: string, subMchid: string, outOrderNo: string, transactionId: string, now: number) {
    const sharing = this.orders.get(key(subMchid, outOrderNo));
    if (!sharing || sharing.spMchid !== spMchid || sharing.transactionId !== transactionId) return undefined;
    this.settleIfDue(sharing, now);
    return sharing;
  }

  /**
   * 请求分账回退: part of what a sharing order gave a merchant receiver, back to the sub-merchant.
   * The return and whether this call created it; the same out_return_no with other fields, a
   * sharing order or receiver that does not exist (or did not receive), or more than the
   * receiver was given minus what earlier returns took back, are refused as INVALID_REQUEST.
   */
  createReturn(spMchid: string, request: CreateReturnRequest, now: number) {
    const identity = JSON.stringify([
      request.order_id ?? null,
      request.out_order_no ?? null,
      request.return_mchid,
      request.amount,
    ]);
    const existing = this.returnOrders.get(key(request.sub_mchid, request.out_return_no));
    if (existing) {
      if (existing.spMchid !== spMchid || existing.identity !== identity) {
        throw invalid(
          `商户回退单号重复: out_return_no ${request.out_return_no} was used with different parameters`,
        );
      }
      this.settleReturnIfDue(existing, now);
      return { ret: existing, created: false };
    }
    const sharing = this.sharingFor(spMchid, request);
    this.settleIfDue(sharing, now);
    const received = sharing.receivers
      .filter((r) => r.type === 'MERCHANT_ID' && r.account === request.return_mchid && r.result === 'SUCCESS')
      .reduce((sum, r) => sum + r.amount, 0);
    if (received === 0) {
      throw invalid(
        `回退方不存在: merchant ${request.return_mchid} received nothing from out_order_no ${sharing.outOrderNo} (returns come from merchant receivers only)`,
      );
    }
    const earlier = [...this.returnOrders.values()].filter(
      (r) => r.subMchid === sharing.subMchid && r.out_order_no === sharing.outOrderNo,
    );
    if (earlier.length >= MAX_RETURNS_PER_ORDER) {
      throw invalid(`回退次数超限: at most ${MAX_RETURNS_PER_ORDER} returns from one sharing order`);
    }
    const returned = earlier
      .filter((r) => r.return_mchid === request.return_mchid && r.result !== 'FAILED')
      .reduce((sum, r) => sum + r.amount, 0);
    if (request.amount > received - returned) {
      throw invalid(
        `回退金额超过可回退金额: ${request.amount} asked, ${received - returned} of ${received} left to return from ${request.return_mchid}`,
      );
    }
    const failed = request.description.includes(RETURN_FAILED_MARKER);
    const ret: ReturnRecord = {
      spMchid,
      subMchid: sharing.subMchid,
      transactionId: sharing.transactionId,
      orderId: sharing.orderId,
      out_order_no: sharing.outOrderNo,
      out_return_no: request.out_return_no,
      return_id: `30${randomDigits(26)}`,
      return_mchid: request.return_mchid,
      amount: request.amount,
      description: request.description,
      result: 'PROCESSING',
      outcome: failed ? 'FAILED' : 'SUCCESS',
      identity,
      createdAt: now,
    };
    this.returnOrders.set(key(ret.subMchid, ret.out_return_no), ret);
    // Synchronous, as WeChat Pay's usually is; a description may keep it PROCESSING a while.
    if (!request.description.includes(RETURN_PROCESSING_MARKER)) this.settleReturn(ret, now);
    return { ret, created: true };
  }

  /** A return order, if it is this sp_mchid's and names that sharing order; settled when due. */
  findReturn(spMchid: string, subMchid: string, outReturnNo: string, outOrderNo: string, now: number) {
    const ret = this.returnOrders.get(key(subMchid, outReturnNo));
    if (!ret || ret.spMchid !== spMchid || ret.out_order_no !== outOrderNo) return undefined;
    this.settleReturnIfDue(ret, now);
    return ret;
  }

  /** A transaction's return orders, oldest first, as a query would see them now. */
  returnsOf(transactionId: string, now: number): WechatpaySandboxReturn[] {
    return [...this.returnOrders.values()]
      .filter((r) => r.transactionId === transactionId)
      .map((r) => {
        this.settleReturnIfDue(r, now);
        return {
          out_order_no: r.out_order_no,
          out_return_no: r.out_return_no,
          return_id: r.return_id,
          return_mchid: r.return_mchid,
          amount: r.amount,
          description: r.description,
          result: r.result,
          ...(r.fail_reason === undefined ? {} : { fail_reason: r.fail_reason }),
        };
      });
  }

  /** A transaction's unfreeze orders, oldest first. */
  unfreezesOf(transactionId: string): WechatpaySandboxUnfreeze[] {
    return (this.byTransactionId.get(transactionId) ?? [])
      .filter((o) => o.kind === 'unfreeze')
      .map((o) => ({
        out_order_no: o.outOrderNo,
        order_id: o.orderId,
        description: o.description ?? '',
        state: o.state,
      }));
  }

  private sharingFor(spMchid: string, request: CreateReturnRequest): SharingOrderRecord {
    const sharing =
      request.out_order_no !== undefined
        ? this.orders.get(key(request.sub_mchid, request.out_order_no))
        : [...this.orders.values()].find(
            (o) => o.subMchid === request.sub_mchid && o.orderId === request.order_id,
          );
    if (!sharing || sharing.spMchid !== spMchid || sharing.kind !== 'share') {
      throw invalid(
        `分账单不存在: no sharing order ${request.out_order_no ?? request.order_id ?? ''} of sub_mchid ${request.sub_mchid}`,
      );
    }
    if (request.order_id !== undefined && request.order_id !== sharing.orderId) {
      throw invalid(`order_id ${request.order_id} is not the order_id of out_order_no ${sharing.outOrderNo}`);
    }
    return sharing;
  }

  private settleReturn(ret: ReturnRecord, now: number): void {
    if (ret.result !== 'PROCESSING') return;
    ret.result = ret.outcome;
    if (ret.outcome === 'FAILED') ret.fail_reason = FAIL_REASON;
    ret.finishedAt = now;
  }

  private settleReturnIfDue(ret: ReturnRecord, now: number): void {
    if (now >= ret.createdAt + this.returnDelayMs) this.settleReturn(ret, now);
  }

  /** PROCESSING → FINISHED, each receiver to its outcome; true when this call changed it. */
  settle(sharing: SharingOrderRecord, now: number): boolean {
    if (sharing.state !== 'PROCESSING') return false;
    sharing.state = 'FINISHED';
    for (const r of sharing.receivers) {
      r.result = r.outcome;
      r.finishedAt = now;
    }
    return true;
  }

  /** The transaction's sharing now, or undefined when no sharing or unfreeze order was made. */
  snapshot(transactionId: string, now: number): WechatpaySandboxSharing | undefined {
    const orders = this.byTransactionId.get(transactionId);
    if (!orders) return undefined;
    for (const o of orders) this.settleIfDue(o, now);
    return {
      orders: orders
        .filter((o) => o.kind === 'share')
        .map((o) => ({
          out_order_no: o.outOrderNo,
          state: o.state,
          receivers: o.receivers.map((r) => ({
            type: r.type,
            account: r.account,
            amount: r.amount,
            result: r.result,
            ...(r.result === 'CLOSED' ? { fail_reason: FAIL_REASON } : {}),
          })),
        })),
      unfrozen: orders.some((o) => o.unfreezes && o.state === 'FINISHED'),
    };
  }

  private settleIfDue(sharing: SharingOrderRecord, now: number): void {
    if (now >= sharing.createdAt + this.delayMs) this.settle(sharing, now);
  }

  /** The earlier order with this out_order_no, or undefined; a different one is refused. */
  private repeated(spMchid: string, subMchid: string, outOrderNo: string, identity: string, now: number) {
    const existing = this.orders.get(key(subMchid, outOrderNo));
    if (!existing) return undefined;
    if (existing.spMchid !== spMchid || existing.identity !== identity) {
      throw invalid(`商户分账单号重复: out_order_no ${outOrderNo} was used with different parameters`);
    }
    this.settleIfDue(existing, now);
    return existing;
  }

  /** The paid transaction whose frozen funds may still be shared or unfrozen, or why not. */
  private sharable(order: OrderRecord | undefined, transactionId: string, subMchid: string) {
    if (!order || order.successAt === undefined) {
      throw invalid(`订单不存在: no paid transaction ${transactionId} of sub_mchid ${subMchid}`);
    }
    if (order.request.settle_info?.profit_sharing !== true) {
      throw invalid(
        `订单不支持分账: transaction ${transactionId} was not created with settle_info.profit_sharing true`,
      );
    }
    const unfreezing = (this.byTransactionId.get(transactionId) ?? []).find((o) => o.unfreezes);
    if (unfreezing) {
      throw invalid(
        `订单已解冻: the rest of transaction ${transactionId} was unfrozen by out_order_no ${unfreezing.outOrderNo}`,
      );
    }
    return order;
  }

  /** What the transaction's sharing orders took or are taking; a CLOSED receiver's share is back. */
  private shared(transactionId: string): number {
    return (this.byTransactionId.get(transactionId) ?? [])
      .flatMap((o) => o.receivers)
      .filter((r) => r.result !== 'CLOSED')
      .reduce((sum, r) => sum + r.amount, 0);
  }

  private newOrder(
    kind: SharingOrderRecord['kind'],
    spMchid: string,
    request: { sub_mchid: string; transaction_id: string; out_order_no: string },
    identity: string,
    now: number,
  ) {
    return {
      kind,
      spMchid,
      subMchid: request.sub_mchid,
      transactionId: request.transaction_id,
      outOrderNo: request.out_order_no,
      orderId: `30${randomDigits(26)}`,
      identity,
      createdAt: now,
    };
  }

  private keep(sharing: SharingOrderRecord): void {
    this.orders.set(key(sharing.subMchid, sharing.outOrderNo), sharing);
    const orders = this.byTransactionId.get(sharing.transactionId) ?? [];
    orders.push(sharing);
    this.byTransactionId.set(sharing.transactionId, orders);
  }
}

// ---- views: the JSON of the endpoints ----

export function receiverView(receiver: WechatpaySandboxReceiver, subMchid: string): Record<string, unknown> {
  return {
    sub_mchid: subMchid,
    type: receiver.type,
    account: receiver.account,
    relation_type: receiver.relation_type,
    ...(receiver.custom_relation === undefined ? {} : { custom_relation: receiver.custom_relation }),
  };
}

export function sharingView(sharing: SharingOrderRecord): Record<string, unknown> {
  return {
    sub_mchid: sharing.subMchid,
    transaction_id: sharing.transactionId,
    out_order_no: sharing.outOrderNo,
    order_id: sharing.orderId,
    state: sharing.state,
    receivers: sharing.receivers.map((r) => ({
      amount: r.amount,
      description: r.description,
      type: r.type,
      account: r.account,
      result: r.result,
      ...(r.result === 'CLOSED' ? { fail_reason: FAIL_REASON } : {}),
      detail_id: r.detailId,
      create_time: rfc3339Cst(sharing.createdAt),
      ...(r.finishedAt === undefined ? {} : { finish_time: rfc3339Cst(r.finishedAt) }),
    })),
  };
}

/** A return order as the return-orders endpoints answer it. */
export function returnView(ret: ReturnRecord): Record<string, unknown> {
  return {
    sub_mchid: ret.subMchid,
    order_id: ret.orderId,
    out_order_no: ret.out_order_no,
    out_return_no: ret.out_return_no,
    return_id: ret.return_id,
    return_mchid: ret.return_mchid,
    amount: ret.amount,
    description: ret.description,
    result: ret.result,
    ...(ret.fail_reason === undefined ? {} : { fail_reason: ret.fail_reason }),
    create_time: rfc3339Cst(ret.createdAt),
    ...(ret.finishedAt === undefined ? {} : { finish_time: rfc3339Cst(ret.finishedAt) }),
  };
}
