/**
 * The sandbox's 商家转账 bills (the 2025 API, the payee confirms in WeChat): their states and the
 * transitions WeChat Pay publishes, kept in memory like its orders. A bill is made ACCEPTED and,
 * its funds locked at once, waits for the payee (WAIT_USER_CONFIRM, with a package_info). The
 * payee confirms (TRANSFERING, then SUCCESS or FAIL), or does not within the confirmation window
 * (24 h at WeChat Pay), and WeChat Pay closes the bill FAIL with fail_reason OVERDUE_CLOSE, the
 * money back with the payer. The merchant may cancel before the payee confirms (CANCELING, then
 * CANCELLED). The remark steers faults: `[transfer:fail]` fails the transfer after the payee
 * confirmed, `[transfer:refuse]` refuses the create, `[transfer:lost]` makes the bill and loses
 * the create's answer.
 */
import { randomBytes } from 'node:crypto';
import { WechatpayError, randomDigits, rfc3339Cst } from './wire';

export type TransferBillState =
  | 'ACCEPTED'
  | 'PROCESSING'
  | 'WAIT_USER_CONFIRM'
  | 'TRANSFERING'
  | 'SUCCESS'
  | 'FAIL'
  | 'CANCELING'
  | 'CANCELLED';

/** The create body, as validated (user_name opened). */
export interface CreateTransferRequest {
  sub_mchid?: string;
  appid: string;
  out_bill_no: string;
  transfer_scene_id: string;
  openid: string;
  user_name?: string;
  transfer_amount: number;
  transfer_remark: string;
  notify_url?: string;
  user_recv_perception?: string;
  transfer_scene_report_infos?: { info_type: string; info_content: string }[];
}

export interface TransferBill {
  /** The service provider that called (the signing mchid). */
  mchid: string;
  request: CreateTransferRequest;
  transferBillNo: string;
  packageInfo: string;
  state: TransferBillState;
  failReason?: string;
  createdAt: number;
  updatedAt: number;
}

export const TRANSFER_FAULTS = {
  fail: '[transfer:fail]',
  refuse: '[transfer:refuse]',
  lost: '[transfer:lost]',
} as const;

/** The states a cancel is accepted in: before the payee has confirmed (撤销转账). */
const CANCELLABLE: readonly TransferBillState[] = ['ACCEPTED', 'PROCESSING', 'WAIT_USER_CONFIRM'];
const FINAL: readonly TransferBillState[] = ['SUCCESS', 'FAIL', 'CANCELLED'];

function billKey(mchid: string, subMchid: string | undefined, outBillNo: string): string {
  return `${mchid}\u0000${subMchid ?? ''}\u0000${outBillNo}`;
}

/** The fields whose change makes a repeated create a different bill (单号已存在但信息不一致). */
function identity(r: CreateTransferRequest): string {
  return JSON.stringify([
    r.appid,
    r.transfer_scene_id,
    r.openid,
    r.user_name ?? null,
    r.transfer_amount,
    r.transfer_remark,
  ]);
}

function invalid(message: string): WechatpayError {
  return new WechatpayError(400, 'INVALID_REQUEST', message);
}

export class TransferBills {
  private readonly bills = new Map<string, TransferBill>();
  private readonly byPackage = new Map<string, TransferBill>();
  /** How many creates arrived per out_bill_no, refused and repeated ones included. */
  private readonly creates = new Map<string, number>();

  countCreate(outBillNo: string): void {
    this.creates.set(outBillNo, (this.creates.get(outBillNo) ?? 0) + 1);
  }

  createCount(outBillNo: string): number {
    return this.creates.get(outBillNo) ?? 0;
  }

  /** The bill and whether this call made it; a repeat with other parameters is refused. */
  create(
    mchid: string,
    request: CreateTransferRequest,
    now: number,
  ): { bill: TransferBill; created: boolean } {
    const key = billKey(mchid, request.sub_mchid, request.out_bill_no);
    const existing = this.bills.get(key);
    if (existing) {
      if (identity(existing.request) !== identity(request)) {
        throw invalid(
          `单号已存在但信息不一致,请查单后比较确认: out_bill_no ${request.out_bill_no} was used with different parameters`,
        );
      }
      return { bill: existing, created: false };
    }
    const bill: TransferBill = {
      mchid,
      request,
      transferBillNo: `1330${randomDigits(30)}`,
      packageInfo: randomBytes(48).toString('base64'),
      state: 'ACCEPTED',
      createdAt: now,
      updatedAt: now,
    };
    this.bills.set(key, bill);
    this.byPackage.set(bill.packageInfo, bill);
    // The funds are locked at once here: the payee may confirm from now on.
    this.move(bill, 'WAIT_USER_CONFIRM', now);
    return { bill, created: true };
  }

  find(mchid: string, subMchid: string | undefined, outBillNo: string): TransferBill | undefined {
    return this.bills.get(billKey(mchid, subMchid, outBillNo));
  }

  findByPackage(packageInfo: string): TransferBill | undefined {
    return this.byPackage.get(packageInfo);
  }

  /** The newest bill of that out_bill_no, whoever made it (for a test's controls). */
  findAny(outBillNo: string): TransferBill | undefined {
    let found: TransferBill | undefined;
    for (const bill of this.bills.values()) {
      if (bill.request.out_bill_no === outBillNo && (!found || bill.createdAt >= found.createdAt))
        found = bill;
    }
    return found;
  }

  /** The payee confirms: TRANSFERING, to be settled later. False when it was not waiting. */
  confirm(bill: TransferBill, now: number): boolean {
    if (bill.state !== 'WAIT_USER_CONFIRM') return false;
    this.move(bill, 'TRANSFERING', now);
    return true;
  }

  /** TRANSFERING → SUCCESS, or FAIL when the remark asks; true when this call changed it. */
  settle(bill: TransferBill, now: number): boolean {
    if (bill.state !== 'TRANSFERING') return false;
    if (bill.request.transfer_remark.includes(TRANSFER_FAULTS.fail)) {
      bill.failReason = 'ACCOUNT_FROZEN';
      this.move(bill, 'FAIL', now);
    } else {
      this.move(bill, 'SUCCESS', now);
    }
    return true;
  }

  /** Never confirmed in time: WeChat Pay closes it FAIL, OVERDUE_CLOSE. True when this call did. */
  expire(bill: TransferBill, now: number): boolean {
    if (bill.state !== 'WAIT_USER_CONFIRM') return false;
    bill.failReason = 'OVERDUE_CLOSE';
    this.move(bill, 'FAIL', now);
    return true;
  }

  /**
   * 撤销转账: CANCELING, to end CANCELLED; true when this call started it. Asked again while it is
   * being cancelled or once cancelled, it answers as it stands; once the payee has confirmed, or
   * the bill has ended otherwise, it is refused.
   */
  cancel(bill: TransferBill, now: number): boolean {
    if (bill.state === 'CANCELING' || bill.state === 'CANCELLED') return false;
    if (!CANCELLABLE.includes(bill.state)) {
      throw invalid(
        `转账单状态为${bill.state},不允许撤销: a bill can be cancelled only before the payee confirms it`,
      );
    }
    this.move(bill, 'CANCELING', now);
    return true;
  }

  /** CANCELING → CANCELLED; true when this call changed it. */
  cancelled(bill: TransferBill, now: number): boolean {
    if (bill.state !== 'CANCELING') return false;
    this.move(bill, 'CANCELLED', now);
    return true;
  }

  isFinal(bill: TransferBill): boolean {
    return FINAL.includes(bill.state);
  }

  private move(bill: TransferBill, state: TransferBillState, now: number): void {
    bill.state = state;
    bill.updatedAt = now;
  }
}

// ---- views: the JSON of answers and callbacks ----

/** The create's answer: package_info while the payee has to confirm. */
export function transferCreatedView(bill: TransferBill): Record<string, unknown> {
  return {
    out_bill_no: bill.request.out_bill_no,
    transfer_bill_no: bill.transferBillNo,
    create_time: rfc3339Cst(bill.createdAt),
    state: bill.state,
    ...(bill.state === 'WAIT_USER_CONFIRM' ? { package_info: bill.packageInfo } : {}),
    ...(bill.failReason === undefined ? {} : { fail_reason: bill.failReason }),
  };
}

/** The query's answer (商户单号查询转账单): the bill without package_info. */
export function transferBillView(bill: TransferBill): Record<string, unknown> {
  const r = bill.request;
  return {
    ...(r.sub_mchid === undefined ? { mch_id: bill.mchid } : { sub_mchid: r.sub_mchid }),
    out_bill_no: r.out_bill_no,
    transfer_bill_no: bill.transferBillNo,
    appid: r.appid,
    state: bill.state,
    transfer_amount: r.transfer_amount,
    transfer_remark: r.transfer_remark,
    ...(bill.failReason === undefined ? {} : { fail_reason: bill.failReason }),
    openid: r.openid,
    create_time: rfc3339Cst(bill.createdAt),
    update_time: rfc3339Cst(bill.updatedAt),
  };
}

/** The cancel's answer (撤销转账). */
export function transferCancelView(bill: TransferBill): Record<string, unknown> {
  return {
    ...(bill.request.sub_mchid === undefined ? {} : { sub_mchid: bill.request.sub_mchid }),
    out_bill_no: bill.request.out_bill_no,
    transfer_bill_no: bill.transferBillNo,
    state: bill.state,
    update_time: rfc3339Cst(bill.updatedAt),
  };
}

/** The plaintext of a MCHTRANSFER.BILL.FINISHED resource. */
export function transferNoticeView(bill: TransferBill): Record<string, unknown> {
  const r = bill.request;
  return {
    out_bill_no: r.out_bill_no,
    transfer_bill_no: bill.transferBillNo,
    state: bill.state,
    mch_id: bill.mchid,
    ...(r.sub_mchid === undefined ? {} : { sub_mchid: r.sub_mchid }),
    transfer_amount: r.transfer_amount,
    openid: r.openid,
    ...(bill.failReason === undefined ? {} : { fail_reason: bill.failReason }),
    create_time: rfc3339Cst(bill.createdAt),
    update_time: rfc3339Cst(bill.updatedAt),
  };
}
