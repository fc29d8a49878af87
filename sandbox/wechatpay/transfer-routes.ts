/**
 * 商家转账 (the 2025 API): create, query by out_bill_no and cancel, in the partner form
 * (`/v3/fund-app/mch-transfer/partner/transfer-bills`, a sub_mchid pays) and the direct form
 * (`/v3/fund-app/mch-transfer/transfer-bills`, the caller pays), and the payee's confirmation
 * page, which stands in for what `wx.requestMerchantTransfer` opens in WeChat. The states and
 * their transitions are in transfers.ts.
 */
import type { Request, Response, Router } from 'express';
import type { SandboxContext } from './context';
import { jsonBody, pageOrScriptBody, paramError, validate } from './http';
import { CHECKOUT_CSP, transferConfirmPage, transferNotFoundPage } from './pages';
import {
  cancelTransferSchema,
  createTransferSchema,
  directCancelSchema,
  transferActionSchema,
} from './schemas';
import {
  TRANSFER_FAULTS,
  transferBillView,
  transferCancelView,
  transferCreatedView,
  transferNoticeView,
  type TransferBill,
  type TransferBills,
} from './transfers';
import { WechatpayError } from './wire';

/** At WeChat Pay, a payee has 24 h to confirm. */
export const TRANSFER_CONFIRM_WINDOW_MS = 24 * 3600_000;
/** Below 0.10 yuan WeChat Pay transfers nothing. */
const MIN_TRANSFER_FEN = 10;
/** From 2 000 yuan on, user_name is required. */
const NAME_REQUIRED_FROM_FEN = 200_000;

const PARTNER = '/v3/fund-app/mch-transfer/partner/transfer-bills';
const DIRECT = '/v3/fund-app/mch-transfer/transfer-bills';
const CONFIRM_PATH = '/sandbox/transfer-confirm';

/**
 * What happens to bills after an answer: the payee's confirmation or its lapse, the settlement
 * after a confirmation or a cancel, and the callback of each final state. The routes and the
 * test controls act through it.
 */
export class TransferDesk {
  private readonly timers = new Map<TransferBill, NodeJS.Timeout>();

  constructor(
    private readonly ctx: SandboxContext,
    readonly bills: TransferBills,
    /** How long a payee may take to confirm, timeScale applied. */
    private readonly confirmWindowMs: number,
    private readonly base: string,
  ) {}

  /** The page a payee confirms on, for a bill's package_info. */
  confirmUrl(packageInfo: string): string {
    return `${this.base}${CONFIRM_PATH}?package_info=${encodeURIComponent(packageInfo)}`;
  }

  /** A new bill: closed FAIL (OVERDUE_CLOSE) unless its payee confirms within the window. */
  watch(bill: TransferBill): void {
    const timer = setTimeout(() => {
      this.timers.delete(bill);
      if (this.bills.expire(bill, Date.now())) this.finished(bill);
    }, this.confirmWindowMs);
    timer.unref();
    this.timers.set(bill, timer);
  }

  /** The payee confirms: TRANSFERING, then SUCCESS (or FAIL) after the refund-like delay. */
  confirm(bill: TransferBill): void {
    if (!this.bills.confirm(bill, Date.now())) {
      throw new WechatpayError(400, 'INVALID_REQUEST', `the bill is ${bill.state}, not WAIT_USER_CONFIRM`);
    }
    this.unwatch(bill);
    this.ctx.logger.info('wechatpay sandbox transfer confirmed', { out_bill_no: bill.request.out_bill_no });
    this.ctx.callbacks.later(
      this.ctx.refundDelayMs,
      () => {
        if (this.bills.settle(bill, Date.now())) this.finished(bill);
      },
      bill.request.out_bill_no,
    );
  }

  /** The payee lets it lapse: what WeChat Pay does once the window is over, now. */
  expire(bill: TransferBill): void {
    if (!this.bills.expire(bill, Date.now())) {
      throw new WechatpayError(400, 'INVALID_REQUEST', `the bill is ${bill.state}, not WAIT_USER_CONFIRM`);
    }
    this.unwatch(bill);
    this.finished(bill);
  }

  /** 撤销转账: CANCELING now, CANCELLED after the refund-like delay. */
  cancel(bill: TransferBill): void {
    if (!this.bills.cancel(bill, Date.now())) return;
    this.unwatch(bill);
    this.ctx.logger.info('wechatpay sandbox transfer cancelling', { out_bill_no: bill.request.out_bill_no });
    this.ctx.callbacks.later(
      this.ctx.refundDelayMs,
      () => {
        if (this.bills.cancelled(bill, Date.now())) this.finished(bill);
      },
      bill.request.out_bill_no,
    );
  }

  /** Forgets every confirmation window still open. */
  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private unwatch(bill: TransferBill): void {
    clearTimeout(this.timers.get(bill));
    this.timers.delete(bill);
  }

  private finished(bill: TransferBill): void {
    const outBillNo = bill.request.out_bill_no;
    this.ctx.logger.info('wechatpay sandbox transfer finished', {
      out_bill_no: outBillNo,
      state: bill.state,
    });
    this.ctx.callbacks.notifyTransfer(bill.request.notify_url, transferNoticeView(bill), outBillNo);
  }
}

export function transferRoutes(router: Router, ctx: SandboxContext, desk: TransferDesk): void {
  const { keys, logger, answer, unseal } = ctx;
  const { bills } = desk;

  function create(req: Request, res: Response, partner: boolean): void {
    const body = validate(createTransferSchema, jsonBody(req));
    bills.countCreate(body.out_bill_no);
    if (partner && body.sub_mchid === undefined) throw paramError('sub_mchid is required');
    if (!partner && body.sub_mchid !== undefined) {
      throw paramError('sub_mchid is not a field of this API: the partner form is under /partner/');
    }
    if (body.appid !== keys.spAppid) {
      throw new WechatpayError(
        400,
        'APPID_MCHID_NOT_MATCH',
        `appid ${body.appid} is not bound to mchid ${String(res.locals.mchid)}`,
      );
    }
    if (body.transfer_remark.includes(TRANSFER_FAULTS.refuse)) {
      throw paramError(
        `openid ${body.openid} is not a user of appid ${body.appid} (fault injection: ${TRANSFER_FAULTS.refuse})`,
      );
    }
    if (body.transfer_amount < MIN_TRANSFER_FEN) {
      throw new WechatpayError(
        400,
        'INVALID_REQUEST',
        '超过单笔转账上下限,核实产品设置是否准确: at least 0.10 yuan',
      );
    }
    if (body.transfer_amount >= NAME_REQUIRED_FROM_FEN && body.user_name === undefined) {
      throw paramError('user_name is required when transfer_amount is 2,000 yuan or more');
    }
    if (!body.transfer_scene_report_infos?.length) throw paramError('需传入转账场景报备信息,请检查');
    const request = {
      ...body,
      ...(body.user_name === undefined ? {} : { user_name: unseal(req, body.user_name, 'user_name') }),
    };
    const { bill, created } = bills.create(String(res.locals.mchid), request, Date.now());
    if (created) {
      // Never the payee's name in a log line.
      logger.info('wechatpay sandbox transfer accepted', {
        out_bill_no: body.out_bill_no,
        sub_mchid: body.sub_mchid,
        transfer_amount: body.transfer_amount,
      });
      desk.watch(bill);
      if (body.transfer_remark.includes(TRANSFER_FAULTS.lost)) {
        // The bill is made; its answer never arrives (a repeat of the create is answered).
        req.socket.destroy();
        return;
      }
    }
    answer(res, 200, transferCreatedView(bill));
  }

  function billOf(req: Request, res: Response, subMchid: string | undefined): TransferBill {
    const bill = bills.find(String(res.locals.mchid), subMchid, String(req.params.out_bill_no));
    if (!bill) throw new WechatpayError(404, 'NOT_FOUND', '记录不存在');
    return bill;
  }

  function partnerSubMchid(req: Request): string {
    const value = (req.query as Record<string, unknown>).sub_mchid;
    if (typeof value !== 'string' || value === '')
      throw paramError('query parameter sub_mchid is required, once');
    return value;
  }

  router.post(PARTNER, (req, res) => create(req, res, true));
  router.post(DIRECT, (req, res) => create(req, res, false));

  router.get(`${PARTNER}/out-bill-no/:out_bill_no`, (req, res) => {
    answer(res, 200, transferBillView(billOf(req, res, partnerSubMchid(req))));
  });
  router.get(`${DIRECT}/out-bill-no/:out_bill_no`, (req, res) => {
    answer(res, 200, transferBillView(billOf(req, res, undefined)));
  });

  router.post(`${PARTNER}/out-bill-no/:out_bill_no/cancel`, (req, res) => {
    const body = validate(cancelTransferSchema, jsonBody(req));
    if (body.sub_mchid === undefined) throw paramError('sub_mchid is required');
    const bill = billOf(req, res, body.sub_mchid);
    desk.cancel(bill);
    answer(res, 200, transferCancelView(bill));
  });
  router.post(`${DIRECT}/out-bill-no/:out_bill_no/cancel`, (req, res) => {
    // No body, or an empty JSON object: both are taken.
    if ((req.rawBody?.length ?? 0) > 0) validate(directCancelSchema, jsonBody(req));
    const bill = billOf(req, res, undefined);
    desk.cancel(bill);
    answer(res, 200, transferCancelView(bill));
  });
}

/** The payee's page, outside /v3 (no merchant signature): what WeChat shows for a package_info. */
export function transferConfirmRoutes(router: Router, ctx: SandboxContext, desk: TransferDesk): void {
  const packageOf = (req: Request) => {
    const value = (req.query as Record<string, unknown>).package_info;
    return typeof value === 'string' ? desk.bills.findByPackage(value) : undefined;
  };

  router.get(CONFIRM_PATH, (req, res) => {
    res.set('Content-Security-Policy', CHECKOUT_CSP).set('Cache-Control', 'no-store');
    const bill = packageOf(req);
    if (!bill) {
      res.status(404).type('html').send(transferNotFoundPage());
      return;
    }
    res.type('html').send(
      transferConfirmPage({
        remark: bill.request.transfer_remark,
        outBillNo: bill.request.out_bill_no,
        transferBillNo: bill.transferBillNo,
        payer: bill.request.sub_mchid ?? bill.mchid,
        openid: bill.request.openid,
        amount: bill.request.transfer_amount,
        state: bill.state,
        ...(bill.failReason === undefined ? {} : { failReason: bill.failReason }),
        waiting: bill.state === 'WAIT_USER_CONFIRM',
      }),
    );
  });

  router.post(CONFIRM_PATH, (req, res) => {
    const bill = packageOf(req);
    if (!bill) throw new WechatpayError(404, 'NOT_FOUND', '记录不存在');
    const { body, fromPage } = pageOrScriptBody(req);
    const { action } = validate(transferActionSchema, body);
    if (action === 'confirm') desk.confirm(bill);
    else desk.expire(bill);
    if (fromPage) {
      res.redirect(303, req.originalUrl);
      return;
    }
    ctx.answer(res, 200, { state: bill.state });
  });
}
