/**
 * The profit-sharing APIs (分账): add a receiver, share a paid transaction, query a sharing order,
 * unfreeze what was not shared, and return a share from a merchant receiver (分账回退) and query
 * the return.
 */
import type { Router } from 'express';
import type { SandboxContext } from './context';
import { jsonBody, paramError, queryParam, validate } from './http';
import { addReceiverSchema, createReturnSchema, createSharingSchema, unfreezeSchema } from './schemas';
import { receiverView, returnView, sharingView } from './sharing';
import { WechatpayError } from './wire';

export function sharingRoutes(router: Router, ctx: SandboxContext): void {
  const { keys, store, sharings, logger, callbacks, refundDelayMs, answer, unseal } = ctx;

  function requireSpAppid(appidGiven: string, spMchid: string): void {
    if (appidGiven !== keys.spAppid) {
      throw new WechatpayError(
        400,
        'APPID_MCHID_NOT_MATCH',
        `appid ${appidGiven} is not bound to sp_mchid ${spMchid}`,
      );
    }
  }

  router.post('/v3/profitsharing/receivers/add', (req, res) => {
    const body = validate(addReceiverSchema, jsonBody(req));
    requireSpAppid(body.appid, String(res.locals.mchid));
    if (body.type === 'MERCHANT_ID' && !/^\d{1,32}$/.test(body.account)) {
      throw paramError('account of a MERCHANT_ID receiver is a merchant id, digits');
    }
    if (body.type === 'MERCHANT_ID' && body.name === undefined) {
      throw paramError("name (the merchant's full name, encrypted) is required for a MERCHANT_ID receiver");
    }
    if (body.type === 'PERSONAL_SUB_OPENID' && body.sub_appid === undefined) {
      throw paramError('sub_appid is required for a PERSONAL_SUB_OPENID receiver');
    }
    if (body.relation_type === 'CUSTOM' && body.custom_relation === undefined) {
      throw paramError('custom_relation is required when relation_type is CUSTOM');
    }
    const name = body.name === undefined ? undefined : unseal(req, body.name, 'name');
    const receiver = sharings.addReceiver(body, name);
    logger.info('wechatpay sandbox sharing receiver added', {
      sub_mchid: body.sub_mchid,
      type: body.type,
      account: body.account,
    });
    answer(res, 200, receiverView(receiver, body.sub_mchid));
  });

  router.post('/v3/profitsharing/orders/unfreeze', (req, res) => {
    const body = validate(unfreezeSchema, jsonBody(req));
    const spMchid = String(res.locals.mchid);
    const now = Date.now();
    const paid = store.findOrderByTransactionId(spMchid, body.transaction_id, body.sub_mchid, now);
    const { sharing, created } = sharings.unfreeze(spMchid, body, paid, now);
    if (created) logger.info('wechatpay sandbox sharing unfrozen', { out_order_no: body.out_order_no });
    answer(res, 200, sharingView(sharing));
  });

  router.post('/v3/profitsharing/orders', (req, res) => {
    const body = validate(createSharingSchema, jsonBody(req));
    const spMchid = String(res.locals.mchid);
    requireSpAppid(body.appid, spMchid);
    if (body.receivers.some((r) => r.type === 'PERSONAL_SUB_OPENID') && body.sub_appid === undefined) {
      throw paramError('sub_appid is required for a PERSONAL_SUB_OPENID receiver');
    }
    const names = body.receivers.map((r, i) =>
      r.name === undefined ? undefined : unseal(req, r.name, `receivers[${i}].name`),
    );
    const now = Date.now();
    const paid = store.findOrderByTransactionId(spMchid, body.transaction_id, body.sub_mchid, now);
    const { sharing, created } = sharings.createSharing(spMchid, body, names, paid, now);
    if (created) {
      logger.info('wechatpay sandbox sharing accepted', { out_order_no: body.out_order_no });
      callbacks.later(refundDelayMs, async () => {
        if (sharings.settle(sharing, Date.now())) {
          logger.info('wechatpay sandbox sharing finished', { out_order_no: body.out_order_no });
        }
      });
    }
    answer(res, 200, sharingView(sharing));
  });

  router.get('/v3/profitsharing/orders/:out_order_no', (req, res) => {
    const subMchid = queryParam(req, 'sub_mchid');
    const transaction = queryParam(req, 'transaction_id');
    const sharing = sharings.findSharing(
      String(res.locals.mchid),
      subMchid,
      req.params.out_order_no,
      transaction,
      Date.now(),
    );
    if (!sharing) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '分账单不存在');
    answer(res, 200, sharingView(sharing));
  });

  // 请求分账回退 and its query: returns from merchant receivers, by out_order_no (or order_id).
  router.post('/v3/profitsharing/return-orders', (req, res) => {
    const body = validate(createReturnSchema, jsonBody(req));
    const { ret, created } = sharings.createReturn(String(res.locals.mchid), body, Date.now());
    if (created) {
      logger.info('wechatpay sandbox sharing return accepted', {
        out_return_no: body.out_return_no,
        result: ret.result,
      });
    }
    answer(res, 200, returnView(ret));
  });

  router.get('/v3/profitsharing/return-orders/:out_return_no', (req, res) => {
    const ret = sharings.findReturn(
      String(res.locals.mchid),
      queryParam(req, 'sub_mchid'),
      req.params.out_return_no,
      queryParam(req, 'out_order_no'),
      Date.now(),
    );
    if (!ret) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '记录不存在');
    answer(res, 200, returnView(ret));
  });
}
