/**
 * The buyer's side: the checkout page an H5 or Native order's URL opens (with its QR code for
 * Native) and a JSAPI or APP order's prepay page, where the buyer pays, keeps paying or fails;
 * a script may post the same choice as JSON.
 */
import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { qrImage } from '../../src/platform/qr';
import type { SandboxContext } from './context';
import type { ComplaintDesk } from './complaints';
import { pageOrScriptBody, paramError, validate } from './http';
import { CHECKOUT_CSP, checkoutPage, notFoundPage } from './pages';
import { buyerSchema } from './schemas';
import { transactionView, type OrderRecord } from './store';

/** The states of a paid order, which its payer may complain about. */
const PAID = ['SUCCESS', 'REFUND'];
import { WechatpayError } from './wire';

/** A payer's complaint from the checkout page (the test control's openComplaint does the same). */
const complaintForm = Joi.object({
  detail: Joi.string().trim().min(1).max(300).required(),
  problem_type: Joi.string().valid('REFUND', 'SERVICE_NOT_WORK', 'OTHERS').required(),
  lost_notification: Joi.string().valid('1'),
});

export function checkoutRoutes(router: Router, ctx: SandboxContext, complaints: ComplaintDesk): void {
  const { store, logger, callbacks, answer, checkoutUrl } = ctx;

  /** Its payer complains about the paid order, from its page; the page shows the complaint. */
  function complain(order: OrderRecord | undefined, req: Request, res: Response): void {
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    const { body, fromPage } = pageOrScriptBody(req);
    const form = validate(complaintForm, body);
    if (!PAID.includes(order.state)) throw paramError('only a paid order is complained about');
    const c = complaints.open(order, {
      detail: form.detail,
      problemType: form.problem_type,
      lostNotification: form.lost_notification === '1',
    });
    logger.info('wechatpay sandbox payer complained', {
      out_trade_no: order.request.out_trade_no,
      complaint_id: c.complaintId,
    });
    if (fromPage) {
      res.redirect(303, req.originalUrl.replace(/\/complaint$/, ''));
      return;
    }
    answer(res, 200, { complaint_id: c.complaintId });
  }

  async function showCheckout(order: OrderRecord | undefined, res: Response, path: string): Promise<void> {
    res.set('Content-Security-Policy', CHECKOUT_CSP).set('Cache-Control', 'no-store');
    if (!order) {
      res.status(404).type('html').send(notFoundPage());
      return;
    }
    const view = transactionView(order);
    res.type('html').send(
      checkoutPage({
        description: order.request.description,
        outTradeNo: order.request.out_trade_no,
        subMchid: order.request.sub_mchid,
        tradeType: String(view.trade_type),
        tradeState: order.state,
        tradeStateDesc: String(view.trade_state_desc),
        total: order.request.amount.total,
        payable: ['NOTPAY', 'USERPAYING', 'PAYERROR'].includes(order.state),
        qrImage: order.kind === 'native' ? await qrImage(checkoutUrl(order)) : undefined,
        ...(PAID.includes(order.state) ? { complainAt: `${path}/complaint` } : {}),
        complaints: complaints
          .all()
          .filter((c) => c.order === order)
          .map((c) => ({ complaintId: c.complaintId, state: c.state, detail: c.detail })),
      }),
    );
  }

  /** The buyer's choice; a form from the page is sent back to the page, a script gets JSON. */
  function actAsBuyer(order: OrderRecord | undefined, req: Request, res: Response): void {
    if (!order) throw new WechatpayError(404, 'ORDER_NOT_EXIST', '订单不存在');
    const { body, fromPage } = pageOrScriptBody(req);
    const { result } = validate(buyerSchema, body);
    const { paid } = store.buyerActs(order, result, Date.now());
    logger.info('wechatpay sandbox buyer acted', { out_trade_no: order.request.out_trade_no, result });
    if (paid) callbacks.notifyPaid(order);
    if (fromPage) {
      res.redirect(303, req.originalUrl);
      return;
    }
    answer(res, 200, { trade_state: order.state });
  }

  // A page's own path, relative: the page is served under whatever mount the sandbox has.
  router.get('/checkout/prepay/:prepay_id', (req, res) =>
    showCheckout(store.findOrderByPrepayId(req.params.prepay_id, Date.now()), res, req.params.prepay_id),
  );
  router.post('/checkout/prepay/:prepay_id', (req, res) =>
    actAsBuyer(store.findOrderByPrepayId(req.params.prepay_id, Date.now()), req, res),
  );
  router.post('/checkout/prepay/:prepay_id/complaint', (req, res) =>
    complain(store.findOrderByPrepayId(req.params.prepay_id, Date.now()), req, res),
  );
  router.get('/checkout/:token', (req, res) =>
    showCheckout(store.findOrderByToken(req.params.token, Date.now()), res, req.params.token),
  );
  router.post('/checkout/:token', (req, res) =>
    actAsBuyer(store.findOrderByToken(req.params.token, Date.now()), req, res),
  );
  router.post('/checkout/:token/complaint', (req, res) =>
    complain(store.findOrderByToken(req.params.token, Date.now()), req, res),
  );
}
