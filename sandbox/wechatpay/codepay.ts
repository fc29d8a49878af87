/**
 * 付款码支付 as a service provider: `POST /v3/pay/partner/transactions/codepay` takes a payment by
 * the buyer's code, and `POST /v3/pay/partner/transactions/out-trade-no/{out_trade_no}/reverse`
 * (撤销) closes one not paid and gives back one paid. The buyer is read off the code
 * (../wallet-buyers.ts): one who pays at once (any ordinary code), confirms later, never confirms,
 * has not enough balance, shows an expired code, is charged while the answer is lost, or confirms
 * just as the reverse arrives (the reverse then gives the money back, or, for the last kind, is
 * refused and the payment stands).
 *
 * Answers as WeChat Pay's: 200 with the transaction (SUCCESS), 202 USERPAYING while the buyer
 * enters a password, 403 NOT_ENOUGH, 400 PARAM_ERROR for a code that is not WeChat Pay's, 403
 * TRADE_ERROR for an expired one. A reverse of an unknown out_trade_no is 404 ORDER_NOT_EXIST.
 */
import { createHash } from 'node:crypto';
import type { Router } from 'express';
import { walletBuyerOf } from '../wallet-buyers';
import type { SandboxContext } from './context';
import { jsonBody, requirePartner, validate } from './http';
import { codepaySchema, reverseSchema } from './schemas';
import { transactionView, type CodepayRequest, type OrderRecord } from './store';
import { WechatpayError } from './wire';

/** WeChat Pay's codes: 18 digits starting 10 to 15. */
const WECHAT_AUTH_CODE = /^1[0-5]\d{16}$/;

/** A description holding this reaches WeChat Pay late: see the codepay route. */
export const CODEPAY_LATE = '[sandbox:codepay-late]';

/** How long a buyer who confirms later takes, before timeScale. */
export const DEFAULT_BUYER_CONFIRM_MS = 1_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** How long a late request takes to reach WeChat Pay, before timeScale. */
export const DEFAULT_CODEPAY_LATE_MS = 500;

export function codepayRoutes(
  router: Router,
  ctx: SandboxContext,
  timings: { buyerConfirmMs: number; lateMs: number },
): void {
  const { buyerConfirmMs, lateMs } = timings;
  const { store, logger, answer, callbacks } = ctx;

  /** The buyer confirms in the wallet: the payment is taken, once. */
  function pay(order: OrderRecord): void {
    if (order.state !== 'USERPAYING' && order.state !== 'NOTPAY') return;
    store.buyerActs(order, 'pay', Date.now());
    logger.info('wechatpay sandbox code payment taken', { out_trade_no: order.request.out_trade_no });
  }

  router.post('/v3/pay/partner/transactions/codepay', (req, res) => {
    const body = validate(codepaySchema, jsonBody(req));
    requirePartner(res, body, ctx.keys.spAppid);
    const code = body.payer.auth_code;
    if (!WECHAT_AUTH_CODE.test(code)) {
      throw new WechatpayError(
        400,
        'PARAM_ERROR',
        '付款码无效，请扫描微信支付付款码（以10/11/12/13/14/15为前缀的18位数字）',
      );
    }
    const buyer = walletBuyerOf(code);
    const { payer: _code, ...rest } = body;
    const request = rest as Omit<CodepayRequest, 'payer'>;
    // Fault injection: the request reaches WeChat Pay late. Its connection is lost at once (the
    // till hears nothing) and the payment is taken a moment afterwards, as a request still on its
    // way when the till gave up would be: a reverse sent at once finds no such payment yet.
    if (body.description.includes(CODEPAY_LATE) && !store.peekOrder(body.sp_mchid, body.out_trade_no)) {
      const codeHash = sha256(code);
      callbacks.later(
        lateMs,
        () => {
          const { order } = store.codepayOrder(
            request,
            { buyer, authCodeSha256: codeHash, requests: 1, reverses: 0, givenBack: false },
            Date.now(),
          );
          pay(order);
        },
        body.out_trade_no,
      );
      req.socket.destroy();
      return;
    }
    const { order, created } = store.codepayOrder(
      request,
      { buyer, authCodeSha256: sha256(code), requests: 0, reverses: 0, givenBack: false },
      Date.now(),
    );
    const codepay = order.codepay;
    if (!codepay) {
      throw new WechatpayError(
        400,
        'INVALID_REQUEST',
        `201 商户订单号重复: out_trade_no ${body.out_trade_no} is another kind of order`,
      );
    }
    codepay.requests += 1;
    if (
      !created &&
      (codepay.authCodeSha256 !== sha256(code) || order.request.amount.total !== body.amount.total)
    ) {
      throw new WechatpayError(
        400,
        'INVALID_REQUEST',
        `201 商户订单号重复: out_trade_no ${body.out_trade_no} was used with another code or amount`,
      );
    }
    if (created) {
      logger.info('wechatpay sandbox code payment asked', { out_trade_no: body.out_trade_no, buyer });
      if (buyer === 'insufficient' || buyer === 'expired') order.state = 'PAYERROR';
      else if (buyer === 'pays' || buyer === 'answer_lost') pay(order);
      else {
        order.state = 'USERPAYING';
        if (buyer === 'confirms_later') {
          callbacks.later(buyerConfirmMs, () => pay(order), body.out_trade_no);
        }
      }
    }
    // The answer the order's state gives, for the first ask and any repeat alike.
    if (codepay.buyer === 'insufficient') throw new WechatpayError(403, 'NOT_ENOUGH', '用户账户余额不足');
    if (codepay.buyer === 'expired')
      throw new WechatpayError(403, 'TRADE_ERROR', '二维码已过期，请用户在微信上刷新后再试');
    if (order.state === 'REVOKED') throw new WechatpayError(400, 'ORDER_REVERSED', '订单已撤销');
    if (order.state === 'CLOSED') throw new WechatpayError(400, 'ORDER_CLOSED', '订单已关闭');
    // Charged, and the answer never reaches the till.
    if (codepay.buyer === 'answer_lost') {
      req.socket.destroy();
      return;
    }
    if (order.state === 'USERPAYING') {
      answer(res, 202, { code: 'USERPAYING', message: '用户支付中，需要输入密码' });
      return;
    }
    answer(res, 200, transactionView(order));
  });

  router.post('/v3/pay/partner/transactions/out-trade-no/:out_trade_no/reverse', (req, res) => {
    const body = validate(reverseSchema, jsonBody(req));
    requirePartner(res, body, ctx.keys.spAppid);
    const now = Date.now();
    const order = store.findOrder(body.sp_mchid, req.params.out_trade_no, body.sub_mchid, now);
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    const codepay = order.codepay;
    if (!codepay) throw new WechatpayError(400, 'INVALID_REQUEST', '该订单不是付款码支付订单，不能撤销');
    codepay.reverses += 1;
    // The buyer confirms just as the reverse arrives: the payment lands first.
    if (codepay.buyer === 'confirms_at_reverse' || codepay.buyer === 'reverse_refused') pay(order);
    if (order.state === 'SUCCESS' || order.state === 'REFUND') {
      if (codepay.buyer === 'reverse_refused') {
        throw new WechatpayError(403, 'TRADE_ERROR', '订单已支付，不能撤销');
      }
      codepay.givenBack = true;
    }
    if (order.state !== 'REVOKED') {
      order.state = 'REVOKED';
      logger.info('wechatpay sandbox code payment reversed', {
        out_trade_no: order.request.out_trade_no,
        given_back: codepay.givenBack,
      });
    }
    answer(res, 200, {
      sp_appid: order.request.sp_appid,
      sp_mchid: order.request.sp_mchid,
      sub_mchid: order.request.sub_mchid,
      out_trade_no: order.request.out_trade_no,
    });
  });
}
