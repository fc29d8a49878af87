/**
 * The buyer's side: the checkout page an H5 or Native order's URL opens (with its QR code for
 * Native) and a JSAPI or APP order's prepay page, where the buyer pays, keeps paying or fails;
 * a script may post the same choice as JSON.
 */
import type { Request, Response, Router } from 'express';
import { qrImage } from '../../src/platform/qr';
import type { SandboxContext } from './context';
import { pageOrScriptBody, validate } from './http';
import { CHECKOUT_CSP, checkoutPage, notFoundPage } from './pages';
import { buyerSchema } from './schemas';
import { transactionView, type OrderRecord } from './store';
import { WechatpayError } from './wire';

export function checkoutRoutes(router: Router, ctx: SandboxContext): void {
  const { store, logger, callbacks, answer, checkoutUrl } = ctx;

  async function showCheckout(order: OrderRecord | undefined, res: Response): Promise<void> {
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

  router.get('/checkout/prepay/:prepay_id', (req, res) =>
    showCheckout(store.findOrderByPrepayId(req.params.prepay_id, Date.now()), res),
  );
  router.post('/checkout/prepay/:prepay_id', (req, res) =>
    actAsBuyer(store.findOrderByPrepayId(req.params.prepay_id, Date.now()), req, res),
  );
  router.get('/checkout/:token', (req, res) =>
    showCheckout(store.findOrderByToken(req.params.token, Date.now()), res),
  );
  router.post('/checkout/:token', (req, res) =>
    actAsBuyer(store.findOrderByToken(req.params.token, Date.now()), req, res),
  );
}
