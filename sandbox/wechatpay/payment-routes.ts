/**
 * The payment and refund APIs (partner mode): create a JSAPI, APP, H5 or Native order, query it
 * by out_trade_no or transaction_id, close it; refund, query a refund, and pay an ABNORMAL refund
 * to a bank card instead (发起异常退款).
 */
import type { Request, Response, Router } from 'express';
import type { SandboxContext } from './context';
import { jsonBody, paramError, queryParam, requirePartner, validate } from './http';
import { abnormalRefundSchema, closeSchema, createOrderSchema, createRefundSchema } from './schemas';
import {
  refundView,
  transactionView,
  type AbnormalRefundApplication,
  type OrderRecord,
  type TradeKind,
} from './store';
import { WechatpayError, parseRfc3339 } from './wire';

const KINDS: readonly TradeKind[] = ['jsapi', 'app', 'h5', 'native'];

export function paymentRoutes(router: Router, ctx: SandboxContext): void {
  const { store, logger, callbacks, refundDelayMs, answer, unseal, checkoutUrl } = ctx;

  router.post('/v3/pay/partner/transactions/:kind', (req, res) => {
    const kind = req.params.kind as TradeKind;
    if (!KINDS.includes(kind))
      throw new WechatpayError(404, 'NOT_FOUND', `no such API: ${req.method} ${req.path}`);
    const body = validate(createOrderSchema, jsonBody(req));
    requirePartner(res, body, ctx.keys.spAppid);
    if (body.payer?.sub_openid !== undefined && body.sub_appid === undefined) {
      throw paramError('sub_appid is required when payer.sub_openid is given');
    }
    if (kind === 'jsapi' && body.payer?.sp_openid === undefined && body.payer?.sub_openid === undefined) {
      throw paramError('payer.sp_openid or payer.sub_openid is required for JSAPI');
    }
    if (kind === 'h5' && body.scene_info?.h5_info === undefined) {
      throw paramError('scene_info.h5_info is required for H5 (with scene_info.payer_client_ip)');
    }
    if (body.description.includes('[sandbox:system-error]')) {
      throw new WechatpayError(500, 'SYSTEM_ERROR', '系统错误 (fault injection: [sandbox:system-error])');
    }
    const now = Date.now();
    const expiresAt = body.time_expire === undefined ? undefined : parseRfc3339(body.time_expire);
    const { order, created } = store.createOrder(kind, body, expiresAt, now);
    if (created) logger.info('wechatpay sandbox order created', { out_trade_no: body.out_trade_no, kind });
    if (kind === 'h5') answer(res, 200, { h5_url: checkoutUrl(order) });
    else if (kind === 'native') answer(res, 200, { code_url: checkoutUrl(order) });
    else answer(res, 200, { prepay_id: order.prepayId });
  });

  function queriedOrder(
    req: Request,
    res: Response,
    find: (spMchid: string, subMchid: string) => OrderRecord | undefined,
  ) {
    const spMchid = queryParam(req, 'sp_mchid');
    const subMchid = queryParam(req, 'sub_mchid');
    requirePartner(res, { sp_mchid: spMchid }, ctx.keys.spAppid);
    const order = find(spMchid, subMchid);
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    return order;
  }

  /** A lost payment's requests are cut off unanswered (lost-trades.ts); true when this one was. */
  function cutOff(req: Request, order: OrderRecord | undefined): boolean {
    if (!order || !ctx.lost.isLost(order)) return false;
    req.socket.destroy();
    return true;
  }

  router.get('/v3/pay/partner/transactions/out-trade-no/:out_trade_no', (req, res) => {
    const order = queriedOrder(req, res, (sp, sub) =>
      store.findOrder(sp, req.params.out_trade_no, sub, Date.now()),
    );
    if (cutOff(req, order)) return;
    answer(res, 200, transactionView(order));
  });

  router.get('/v3/pay/partner/transactions/id/:transaction_id', (req, res) => {
    const order = queriedOrder(req, res, (sp, sub) =>
      store.findOrderByTransactionId(sp, req.params.transaction_id, sub, Date.now()),
    );
    if (cutOff(req, order)) return;
    answer(res, 200, transactionView(order));
  });

  router.post('/v3/pay/partner/transactions/out-trade-no/:out_trade_no/close', (req, res) => {
    const body = validate(closeSchema, jsonBody(req));
    requirePartner(res, body, ctx.keys.spAppid);
    const now = Date.now();
    const order = store.findOrder(body.sp_mchid, req.params.out_trade_no, body.sub_mchid, now);
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    if (cutOff(req, order)) return;
    store.closeOrder(order, now);
    logger.info('wechatpay sandbox order closed', { out_trade_no: req.params.out_trade_no });
    answer(res, 204);
  });

  router.post('/v3/refund/domestic/refunds', (req, res) => {
    const body = validate(createRefundSchema, jsonBody(req));
    const { refund, created } = store.createRefund(String(res.locals.mchid), body, Date.now());
    if (created) {
      logger.info('wechatpay sandbox refund accepted', { out_refund_no: body.out_refund_no });
      callbacks.later(refundDelayMs, () => callbacks.settle(refund), refund.order.request.out_trade_no);
    }
    answer(res, 200, refundView(refund));
  });

  router.get('/v3/refund/domestic/refunds/:out_refund_no', (req, res) => {
    const subMchid = queryParam(req, 'sub_mchid');
    const refund = store.findRefund(subMchid, req.params.out_refund_no);
    if (!refund) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '退款单不存在');
    // Due but its timer not yet run: a query never sees a refund older than its delay PROCESSING.
    if (Date.now() >= refund.processingSince + refundDelayMs) callbacks.settle(refund);
    answer(res, 200, refundView(refund));
  });

  // 发起异常退款: an ABNORMAL refund paid to a bank card instead, then SUCCESS with its callback.
  router.post('/v3/refund/domestic/refunds/:refund_id/apply-abnormal-refund', (req, res) => {
    const body = validate(abnormalRefundSchema, jsonBody(req));
    const refund = store.findRefund(body.sub_mchid, body.out_refund_no);
    if (!refund || refund.spMchid !== res.locals.mchid || refund.refundId !== req.params.refund_id) {
      throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '退款单不存在');
    }
    if (body.type === 'USER_BANK_CARD') {
      for (const field of ['bank_type', 'bank_account', 'real_name'] as const) {
        if (body[field] === undefined) throw paramError(`${field} is required when type is USER_BANK_CARD`);
      }
    }
    const application: AbnormalRefundApplication = {
      type: body.type,
      ...(body.bank_type === undefined ? {} : { bank_type: body.bank_type }),
      ...(body.bank_account === undefined
        ? {}
        : { bank_account: unseal(req, body.bank_account, 'bank_account') }),
      ...(body.real_name === undefined ? {} : { real_name: unseal(req, body.real_name, 'real_name') }),
      appliedAt: Date.now(),
    };
    if (store.applyAbnormal(refund, application, application.appliedAt)) {
      // Never the card or the name in a log line.
      logger.info('wechatpay sandbox abnormal refund applied', {
        out_refund_no: body.out_refund_no,
        type: body.type,
      });
      callbacks.later(refundDelayMs, () => callbacks.settle(refund), refund.order.request.out_trade_no);
    }
    answer(res, 200, refundView(refund));
  });
}
