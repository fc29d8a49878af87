import type { Request, Response, Router } from 'express';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { parsePage } from '../../platform/pagination';
import type { Logger } from '../../platform/logger';
import { CHECKOUT_SCRIPT } from './page-script';
import {
  amountPage,
  CHECKOUT_PAGE_CSP,
  landingPage,
  langOf,
  messagePage,
  orderPage,
  type Lang,
} from './pages';
import { toBuffer, toString } from 'qrcode';
import {
  createMerchantCodeSchema,
  createPaymentLinkSchema,
  listMerchantCodesQuery,
  listPaymentLinksQuery,
} from './schemas';
import { CheckoutService, type MerchantCodeBody, type PaymentLinkBody, type Visit } from './service';

/** SPEC §15: an app's payment links (signed, scope `payments`). */
export function paymentLinkRoutes(checkout: CheckoutService): Router {
  const router = apiRouter();

  router.post('/api/v1/payment-links', parseJsonBody(), async (req, res) => {
    const body = validate(createPaymentLinkSchema, req.body) as PaymentLinkBody;
    const { link, isIdempotent } = await checkout.createLink(currentApp(res).appId, body);
    sendData(res, { ...(await checkout.linkView(link)), is_idempotent: isIdempotent });
  });

  router.get('/api/v1/payment-links', async (req, res) => {
    const query = validate(listPaymentLinksQuery, req.query) as {
      status?: 'active' | 'deactivated';
      merchant_id?: string;
      limit?: string;
      offset?: string;
    };
    const page = parsePage(query);
    const { rows, total } = await checkout.repository.listLinks(
      currentApp(res).appId,
      { status: query.status, merchantId: query.merchant_id },
      page,
    );
    const now = new Date();
    sendData(res, { list: await Promise.all(rows.map((l) => checkout.linkView(l, now))), total, ...page });
  });

  router.get('/api/v1/payment-links/:linkId', async (req, res) => {
    const linkId = pathValue(req.params, 'linkId', 'link_id');
    sendData(res, await checkout.linkView(await checkout.findLink(currentApp(res).appId, linkId)));
  });

  router.post('/api/v1/payment-links/:linkId/deactivate', parseJsonBody(), async (req, res) => {
    const linkId = pathValue(req.params, 'linkId', 'link_id');
    sendData(res, await checkout.linkView(await checkout.deactivateLink(currentApp(res).appId, linkId)));
  });

  return router;
}

/** SPEC §15: a merchant's standing codes (码牌), under the merchant (signed, scope `merchants`). */
export function merchantCodeRoutes(checkout: CheckoutService): Router {
  const router = apiRouter();
  const base = '/api/v1/merchant/:merchantID/codes';
  const merchantOf = (req: Request) => pathValue(req.params, 'merchantID', 'merchant_id');
  const codeOf = (req: Request) => pathValue(req.params, 'codeId', 'code_id');

  router.post(base, parseJsonBody(), async (req, res) => {
    const body = validate(createMerchantCodeSchema, req.body) as MerchantCodeBody;
    const code = await checkout.createCode(currentApp(res).appId, merchantOf(req), body);
    sendData(res, await checkout.codeView(code));
  });

  router.get(base, async (req, res) => {
    const query = validate(listMerchantCodesQuery, req.query) as { limit?: string; offset?: string };
    const page = parsePage(query);
    const { rows, total } = await checkout.repository.listCodes(currentApp(res).appId, merchantOf(req), page);
    sendData(res, { list: await Promise.all(rows.map((c) => checkout.codeView(c))), total, ...page });
  });

  router.get(`${base}/:codeId`, async (req, res) => {
    const code = await checkout.findCode(currentApp(res).appId, merchantOf(req), codeOf(req));
    sendData(res, await checkout.codeView(code));
  });

  router.post(`${base}/:codeId/disable`, parseJsonBody(), async (req, res) => {
    const code = await checkout.disableCode(currentApp(res).appId, merchantOf(req), codeOf(req));
    sendData(res, await checkout.codeView(code));
  });

  // Printable: the code's URL at a size a printer keeps sharp, with a wide quiet zone.
  router.get(`${base}/:codeId/qr.png`, async (req, res) => {
    const code = await checkout.findCode(currentApp(res).appId, merchantOf(req), codeOf(req));
    const png = await toBuffer(checkout.codeUrl(code.codeId), {
      type: 'png',
      errorCorrectionLevel: 'Q',
      margin: 4,
      width: 1024,
    });
    res.status(200).type('image/png').set('Cache-Control', 'no-store').send(png);
  });

  router.get(`${base}/:codeId/qr.svg`, async (req, res) => {
    const code = await checkout.findCode(currentApp(res).appId, merchantOf(req), codeOf(req));
    const svg = await toString(checkout.codeUrl(code.codeId), {
      type: 'svg',
      errorCorrectionLevel: 'Q',
      margin: 4,
    });
    res.status(200).type('image/svg+xml').set('Cache-Control', 'no-store').send(svg);
  });

  return router;
}

/**
 * SPEC §15: the buyer's pages, unsigned (a buyer has no credentials): a link, the wallet's way
 * back from its sign-in, H5 pay, and an order's page and status.
 */
export function checkoutPageRoutes(checkout: CheckoutService): Router {
  const router = apiRouter();

  const lang = (req: Request): Lang => langOf(req.query.lang, req.get('Accept-Language'));
  const page = (res: Response, status: number, html: string) =>
    res
      .status(status)
      .set('Content-Security-Policy', CHECKOUT_PAGE_CSP)
      .set('Cache-Control', 'no-store')
      .set('X-Content-Type-Options', 'nosniff')
      .type('html')
      .send(html);

  function show(req: Request, res: Response, visit: Visit): void {
    if (visit.kind === 'redirect') {
      res.set('Cache-Control', 'no-store').redirect(303, visit.to);
      return;
    }
    if (visit.kind === 'message') {
      page(res, visit.status, messagePage(lang(req), visit.message));
      return;
    }
    if (visit.kind === 'amount') {
      page(
        res,
        visit.problem ? 400 : 200,
        amountPage({
          lang: lang(req),
          codeId: visit.code.codeId,
          merchantName: visit.merchantName,
          name: visit.code.name,
          minAmount: Number(visit.code.minAmount),
          maxAmount: Number(visit.code.maxAmount),
          wallet: visit.wallet,
          h5: visit.h5,
          ...(visit.problem ? { problem: visit.problem } : {}),
          ...(visit.entered ? { amount: visit.entered.amount, note: visit.entered.note } : {}),
        }),
      );
      return;
    }
    page(
      res,
      200,
      landingPage({
        lang: lang(req),
        h5Action: visit.h5Action,
        subject: visit.subject,
        amount: visit.amount,
        url: visit.url,
        qrImage: visit.qrImage,
        h5: visit.h5,
      }),
    );
  }

  const linkIdOf = (req: Request) => {
    const id = String(req.params.linkId);
    return /^pl_[a-z2-7]{20}$/.test(id) ? id : undefined;
  };

  router.get('/checkout/assets/checkout.js', (_req, res) => {
    res
      .type('application/javascript')
      .set('Cache-Control', 'public, max-age=300')
      .set('X-Content-Type-Options', 'nosniff')
      .send(CHECKOUT_SCRIPT);
  });

  router.get('/checkout/l/:linkId', async (req, res) => {
    const linkId = linkIdOf(req);
    if (!linkId) return show(req, res, { kind: 'message', status: 404, message: 'not_found' });
    return show(req, res, await checkout.openLink(linkId, req.get('User-Agent') ?? ''));
  });

  router.post('/checkout/l/:linkId/h5', async (req, res) => {
    const linkId = linkIdOf(req);
    if (!linkId) return show(req, res, { kind: 'message', status: 404, message: 'not_found' });
    const form = new URLSearchParams((req.rawBody ?? Buffer.alloc(0)).toString('utf8'));
    const channel = form.get('channel') ?? '';
    return show(
      req,
      res,
      await checkout.payByH5(linkId, channel, req.ip ?? '127.0.0.1', res.locals.log as Logger),
    );
  });

  const codeIdOf = (req: Request) => {
    const id = String(req.params.codeId);
    return /^mc_[a-z2-7]{20}$/.test(id) ? id : undefined;
  };

  router.get('/checkout/c/:codeId', async (req, res) => {
    const codeId = codeIdOf(req);
    if (!codeId) return show(req, res, { kind: 'message', status: 404, message: 'code_not_found' });
    return show(req, res, await checkout.openCode(codeId, req.get('User-Agent') ?? ''));
  });

  router.post('/checkout/c/:codeId', async (req, res) => {
    const codeId = codeIdOf(req);
    if (!codeId) return show(req, res, { kind: 'message', status: 404, message: 'code_not_found' });
    const form = new URLSearchParams((req.rawBody ?? Buffer.alloc(0)).toString('utf8'));
    return show(
      req,
      res,
      await checkout.payCode(
        codeId,
        {
          amount: (form.get('amount') ?? '').slice(0, 32),
          note: (form.get('note') ?? '').slice(0, 256),
          ...(form.get('channel') ? { channel: form.get('channel')! } : {}),
        },
        { userAgent: req.get('User-Agent') ?? '', ip: req.ip ?? '127.0.0.1' },
        res.locals.log as Logger,
      ),
    );
  });

  router.get('/checkout/signed-in/:channel', async (req, res) => {
    const channel = String(req.params.channel);
    return show(
      req,
      res,
      await checkout.signedIn(channel, req.query as Record<string, unknown>, res.locals.log as Logger),
    );
  });

  router.get('/checkout/o/:token', async (req, res) => {
    const order = await checkout.orderOfToken(String(req.params.token));
    if (!order) return page(res, 404, messagePage(lang(req), 'order_not_found'));
    // A checkout order (pay_method: checkout) whose buyer has not picked a channel yet.
    // (Past its expiry it is closing: its page, which follows its status, rather than a sign-in.)
    if (
      CheckoutService.awaitsChannel(order) &&
      order.status === 'pending' &&
      order.expireTime.getTime() > Date.now()
    ) {
      return show(req, res, await checkout.openOrder(order, req.get('User-Agent') ?? ''));
    }
    if (checkout.paidElsewhere(order, req.get('User-Agent') ?? '')) {
      return show(req, res, { kind: 'message', status: 409, message: 'order_taken' });
    }
    const credential = order.payCredential ?? {};
    const inWallet = order.payMethod === 'jsapi' || order.channelPayMethod === 'jsapi';
    const wallet =
      inWallet && (order.channelCode === 'wechatpay' || order.channelCode === 'alipay')
        ? order.channelCode
        : null;
    const bridge =
      wallet === 'wechatpay'
        ? credential
        : wallet === 'alipay' && typeof credential.trade_no === 'string'
          ? { tradeNO: credential.trade_no }
          : null;
    return page(
      res,
      200,
      orderPage({
        lang: lang(req),
        tradeNo: order.tradeNo,
        subject: order.subject,
        amount: Number(order.amount),
        status: order.status,
        wallet,
        bridge,
        statusUrl: `/checkout/o/${String(req.params.token)}/status`,
      }),
    );
  });

  router.post('/checkout/o/:token/h5', async (req, res) => {
    const order = await checkout.orderOfToken(String(req.params.token));
    if (!order) return page(res, 404, messagePage(lang(req), 'order_not_found'));
    const form = new URLSearchParams((req.rawBody ?? Buffer.alloc(0)).toString('utf8'));
    const channel = form.get('channel') ?? '';
    return show(
      req,
      res,
      await checkout.payOrderByH5(order, channel, req.ip ?? '127.0.0.1', res.locals.log as Logger),
    );
  });

  router.get('/checkout/o/:token/status', async (req, res) => {
    const order = await checkout.orderOfToken(String(req.params.token));
    res.set('Cache-Control', 'no-store');
    if (!order) {
      res.status(404).json({ status: null });
      return;
    }
    res.json({ status: order.status });
  });

  return router;
}
