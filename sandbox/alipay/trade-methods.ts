/**
 * The trade methods of gateway.do (统一收单): precreate, create, query, close, refund and refund
 * query, plus the checks of the page, wap and app payments whose trade the buyer's visit or the
 * app's submit makes. Each returns its business fields; the router signs the answer.
 */
import Joi from 'joi';
import type { AlipayGateway, Call, Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import type { RefundRoyaltyParameter, RoyaltyBook } from './royalty';
import type { PayMethod } from './store';
import { queryView, refundQueryView } from './views';
import { PRICE, fenOfPrice, invalidArgument } from './wire';

/** The product_code each paying method takes: required where the method documents it so. */
const PRODUCT_CODES: Record<PayMethod, { code?: string; required: boolean }> = {
  'alipay.trade.pay': { code: 'FACE_TO_FACE_PAYMENT', required: false },
  'alipay.trade.precreate': { required: false },
  'alipay.trade.create': { required: false },
  'alipay.trade.page.pay': { code: 'FAST_INSTANT_TRADE_PAY', required: true },
  'alipay.trade.wap.pay': { code: 'QUICK_WAP_WAY', required: true },
  'alipay.trade.app.pay': { code: 'QUICK_MSECURITY_PAY', required: false },
};

export const PAGE_METHODS: readonly string[] = ['alipay.trade.page.pay', 'alipay.trade.wap.pay'];

/** The trade a paying method's call asks for, after that method's own rules. */
export function openPaymentTrade(gateway: AlipayGateway, method: PayMethod, call: Call) {
  const biz = parseBizContent(call.params);
  const product = PRODUCT_CODES[method];
  const code = biz.product_code;
  if (code === undefined && product.required) {
    throw invalidArgument('isv.missing-parameter', `缺少必选参数 product_code (${product.code})`);
  }
  if (code !== undefined && product.code !== undefined && code !== product.code) {
    throw invalidArgument('isv.invalid-parameter', `参数无效 product_code: ${method} takes ${product.code}`);
  }
  if (method === 'alipay.trade.create' && biz.buyer_id === undefined && biz.buyer_open_id === undefined) {
    throw invalidArgument('isv.missing-parameter', '缺少必选参数 buyer_id (or buyer_open_id)');
  }
  return gateway.openTrade(method, call, biz);
}

const tradeRef = {
  out_trade_no: Joi.string().min(1).max(64),
  trade_no: Joi.string().min(1).max(64),
};
const refSchema = Joi.object<{ out_trade_no?: string; trade_no?: string }>(tradeRef)
  .or('out_trade_no', 'trade_no')
  .required();

interface RefundRequest {
  out_trade_no?: string;
  trade_no?: string;
  refund_amount: string;
  out_request_no?: string;
  refund_reason?: string;
  refund_royalty_parameters?: RefundRoyaltyParameter[];
}

const refundSchema = Joi.object<RefundRequest>({
  ...tradeRef,
  refund_amount: Joi.string().pattern(PRICE).required(),
  out_request_no: Joi.string().min(1).max(64),
  refund_reason: Joi.string().max(256),
  // 退分账: the receivers that give their share back with this refund (transfer only here).
  refund_royalty_parameters: Joi.array()
    .items(
      Joi.object({
        royalty_type: Joi.string().valid('transfer'),
        trans_out_type: Joi.string().valid('userId', 'loginName', 'openId'),
        trans_out: Joi.string().min(1).max(100).required(),
        trans_in_type: Joi.string().valid('userId', 'loginName', 'openId'),
        trans_in: Joi.string().min(1).max(100),
        amount: Joi.alternatives(Joi.string(), Joi.number()).required(),
        desc: Joi.string().max(1000),
      }).unknown(true),
    )
    .min(1)
    .max(50),
})
  .or('out_trade_no', 'trade_no')
  .required();

interface RefundQueryRequest {
  out_trade_no?: string;
  trade_no?: string;
  out_request_no: string;
  query_options?: string[];
}

const refundQuerySchema = Joi.object<RefundQueryRequest>({
  ...tradeRef,
  out_request_no: Joi.string().min(1).max(64).required(),
  query_options: Joi.array().items(Joi.string()),
})
  .or('out_trade_no', 'trade_no')
  .required();

/** Missing one of two alternatives reads as the first one missing, as the gateway names it. */
function ref<T extends object>(schema: Joi.Schema<T>, call: Call): T {
  const biz = parseBizContent(call.params);
  if (biz.out_trade_no === undefined && biz.trade_no === undefined) {
    throw invalidArgument('isv.missing-parameter', '缺少必选参数 out_trade_no (or trade_no)');
  }
  return validateBiz(schema, biz);
}

export function tradeHandlers(gateway: AlipayGateway, royalty: RoyaltyBook): Record<string, Handler> {
  return {
    'alipay.trade.precreate': (call) => {
      const { trade } = openPaymentTrade(gateway, 'alipay.trade.precreate', call);
      return { out_trade_no: trade.order.out_trade_no, qr_code: gateway.cashierUrl(trade) };
    },

    'alipay.trade.create': (call) => {
      const { trade } = openPaymentTrade(gateway, 'alipay.trade.create', call);
      return { out_trade_no: trade.order.out_trade_no, trade_no: trade.tradeNo };
    },

    'alipay.trade.query': (call) => queryView(gateway.find(call, ref(refSchema, call))),

    'alipay.trade.close': (call) => {
      const trade = gateway.find(call, ref(refSchema, call));
      gateway.closeTrade(trade, call.now);
      return { trade_no: trade.tradeNo, out_trade_no: trade.order.out_trade_no };
    },

    'alipay.trade.refund': (call) => {
      const body = ref(refundSchema, call);
      const amountFen = fenOfPrice(body.refund_amount)!;
      if (amountFen < 1)
        throw invalidArgument('isv.invalid-parameter', '参数无效 refund_amount: at least 0.01');
      const trade = gateway.find(call, body);
      // Without out_request_no a refund is the trade's one refund in full, named by the trade.
      const outRequestNo = body.out_request_no ?? trade.order.out_trade_no;
      const repeat = trade.refunds.some((r) => r.outRequestNo === outRequestNo);
      // The shares it gives back are checked before the refund is taken, and kept once it is.
      const returns =
        repeat || body.refund_royalty_parameters === undefined
          ? []
          : royalty.checkReturns(trade, body.refund_royalty_parameters);
      const answer = gateway.refund(
        trade,
        {
          outRequestNo,
          amountFen,
          ...(body.refund_reason === undefined ? {} : { reason: body.refund_reason }),
        },
        call.now,
      );
      if (returns.length > 0) royalty.recordReturns(trade.tradeNo, outRequestNo, returns, call.now);
      return answer;
    },

    'alipay.trade.fastpay.refund.query': (call) => {
      const body = ref(refundQuerySchema, call);
      const trade = gateway.find(call, body);
      const refund = trade.refunds.find((r) => r.outRequestNo === body.out_request_no);
      // Alipay answers success without the refund's fields when it has no such refund.
      return refund ? refundQueryView(trade, refund) : {};
    },
  };
}
