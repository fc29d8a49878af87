/**
 * The royalty methods of gateway.do: alipay.trade.royalty.relation.bind (idempotent),
 * alipay.trade.order.settle (idempotent by out_request_no) and alipay.trade.order.settle.query
 * (by settle_no, or out_request_no with trade_no). Their state is the RoyaltyBook's.
 */
import Joi from 'joi';
import type { AlipayGateway, Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import type { BindRequest, RoyaltyBook, SettleRequest } from './royalty';
import { refundedFen } from './store';
import { businessFailed, invalidArgument } from './wire';

// Alipay's request numbers here: 32 characters at most, letters, digits and underscores.
const outRequestNo = Joi.string().pattern(/^[A-Za-z0-9_]{1,32}$/);

const bindSchema = Joi.object<BindRequest>({
  out_request_no: outRequestNo.required(),
  receiver_list: Joi.array()
    .items(
      Joi.object({
        type: Joi.string().valid('userId', 'loginName', 'openId').required(),
        account: Joi.string().min(1).max(100).required(),
        name: Joi.string().max(100),
        memo: Joi.string().max(100),
      }).unknown(true),
    )
    .min(1)
    .max(20)
    .required(),
}).required();

const settleSchema = Joi.object<SettleRequest>({
  out_request_no: outRequestNo.required(),
  trade_no: Joi.string().min(1).max(64).required(),
  royalty_parameters: Joi.array()
    .items(
      Joi.object({
        royalty_type: Joi.string().valid('transfer', 'replenish'),
        trans_out: Joi.string(),
        trans_out_type: Joi.string().valid('userId', 'loginName', 'openId'),
        trans_in_type: Joi.string().valid('userId', 'cardAliasNo', 'loginName', 'openId').required(),
        trans_in: Joi.string().min(1).max(100).required(),
        amount: Joi.alternatives(Joi.string(), Joi.number()).required(),
        desc: Joi.string().max(1000),
      }).unknown(true),
    )
    .min(1)
    .max(50),
  royalty_mode: Joi.string().valid('sync', 'async'),
  operator_id: Joi.string(),
  extend_params: Joi.object().unknown(true),
}).required();

const settleQuerySchema = Joi.object<{ settle_no?: string; out_request_no?: string; trade_no?: string }>({
  settle_no: Joi.string().min(1).max(64),
  out_request_no: outRequestNo,
  trade_no: Joi.string().min(1).max(64),
})
  .or('settle_no', 'out_request_no')
  .and('out_request_no', 'trade_no')
  .required();

export function royaltyHandlers(gateway: AlipayGateway, book: RoyaltyBook): Record<string, Handler> {
  const delayMs = gateway.options.refundDelayMs;
  const transOut = { trans_out_type: 'userId', trans_out: gateway.options.keys.sellerId };
  return {
    'alipay.trade.royalty.relation.bind': (call) => {
      book.bind(validateBiz(bindSchema, parseBizContent(call.params)), call.now);
      return { result_code: 'SUCCESS' };
    },

    'alipay.trade.order.settle': (call) => {
      const request = validateBiz(settleSchema, parseBizContent(call.params));
      const trade = gateway.find(call, { trade_no: request.trade_no });
      if (request.royalty_parameters === undefined) {
        // 分账解冻 alone: only the royalty_finish flag, no receivers.
        if (request.extend_params?.royalty_finish !== 'true') {
          throw invalidArgument(
            'isv.missing-parameter',
            '缺少必选参数 royalty_parameters (or extend_params.royalty_finish "true" to unfreeze alone)',
          );
        }
        const unfreeze = book.unfreeze(trade, request, call.now);
        return { trade_no: trade.tradeNo, settle_no: unfreeze.settle_no };
      }
      const settlement = book.settle(trade, request, refundedFen(trade, true), call.now);
      return { trade_no: trade.tradeNo, settle_no: settlement.settle_no };
    },

    'alipay.trade.order.settle.query': (call) => {
      const biz = parseBizContent(call.params);
      if (biz.settle_no === undefined && biz.out_request_no === undefined) {
        throw invalidArgument(
          'isv.missing-parameter',
          '缺少必选参数 settle_no (or out_request_no with trade_no)',
        );
      }
      const query = validateBiz(settleQuerySchema, biz);
      const settlement = book.query(query, call.now, delayMs);
      if (!settlement) throw businessFailed('ACQ.TRADE_SETTLE_NOT_EXIST', '分账单不存在');
      // The trade must be the caller's own (app_auth_token), as for every trade method.
      gateway.find(call, { trade_no: settlement.trade_no });
      return {
        out_request_no: settlement.out_request_no,
        operation_dt: settlement.operation_dt,
        royalty_detail_list: settlement.royalty_detail_list.map(({ desc: _desc, ...detail }) => ({
          ...detail,
          ...transOut,
        })),
      };
    },
  };
}
