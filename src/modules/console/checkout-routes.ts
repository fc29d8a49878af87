/**
 * The console's payment links and standing codes (SPEC §15, docs/console.md): every app's links
 * in keyset pages, a merchant's codes, and an operator's making, deactivating and disabling of
 * them, each through the same CheckoutService the API's routes call, and audited.
 */
import type { Response, Router } from 'express';
import { toBuffer } from 'qrcode';
import { AppError } from '../../platform/errors';
import { randomBase32 } from '../../platform/ids';
import { parseJsonBody } from '../../platform/http/body';
import { sendData } from '../../platform/http/envelope';
import { apiRouter } from '../../platform/http/router';
import { pathValue, validate } from '../../platform/http/validation';
import type { CheckoutService } from '../checkout';
import { audit, refusalsAudited, requireRole } from './guard';
import { listOf, pageOf } from '../../platform/http/keyset';
import {
  appBody,
  consoleCodeBody,
  consoleLinkBody,
  emptyBody,
  listCodesQuery,
  listLinksQuery,
} from './schemas';

/** The app a console request names (`app_id`): a merchant id may repeat across apps. */
const appOf = (q: { app_id?: string }): string => {
  if (!q.app_id) throw new AppError('invalid_param', '"app_id" is required');
  return q.app_id;
};

/** Runs an operator's change of a link or a code, audited with what it was and became. */
async function audited<T>(
  res: Response,
  what: { action: string; targetType: string; targetId: string },
  before: () => Promise<unknown>,
  run: () => Promise<T>,
  after: (result: T) => Promise<unknown>,
): Promise<T> {
  let was: unknown;
  const answer = await refusalsAudited(
    res,
    async () => {
      was = await before();
      return run();
    },
    async () => ({ ...what, before: was, after: was }),
  );
  await audit(res, { ...what, before: was, after: await after(answer) });
  return answer;
}

export function consoleCheckoutRoutes(checkout: CheckoutService): Router {
  const router = apiRouter();
  const { repository } = checkout;
  const linkView = async (appId: string, linkId: string) => {
    const link = await repository.findLinkOfApp(appId, linkId);
    return link ? { ...(await checkout.linkView(link)), app_id: link.appId } : undefined;
  };

  router.get('/payment-links', async (req, res) => {
    const q = validate(listLinksQuery, req.query) as {
      app_id?: string;
      status?: 'active' | 'deactivated';
      merchant_id?: string;
      limit?: string;
      after?: string;
    };
    const found = await repository.searchLinks(
      { appId: q.app_id, status: q.status, merchantId: q.merchant_id },
      pageOf(q),
    );
    const now = new Date();
    const views = await Promise.all(
      found.rows.map(async (l) => ({ ...(await checkout.linkView(l, now)), app_id: l.appId })),
    );
    sendData(
      res,
      listOf({ rows: views, next: found.next }, (v) => v),
    );
  });

  router.post('/payment-links', requireRole('operator'), parseJsonBody(), async (req, res) => {
    const body = validate(consoleLinkBody, req.body ?? {}) as {
      app_id: string;
      merchant_link_no?: string;
    } & Parameters<CheckoutService['createLink']>[1];
    const { app_id: appId, ...fields } = body;
    const merchantLinkNo = fields.merchant_link_no ?? `console-${randomBase32(16)}`;
    const made = await audited(
      res,
      { action: 'payment_link.create', targetType: 'payment_link', targetId: merchantLinkNo },
      async () => undefined,
      () => checkout.createLink(appId, { ...fields, merchant_link_no: merchantLinkNo }),
      async ({ link }) => linkView(appId, link.linkId),
    );
    sendData(res, {
      ...(await checkout.linkView(made.link)),
      app_id: appId,
      is_idempotent: made.isIdempotent,
    });
  });

  router.post(
    '/payment-links/:linkId/deactivate',
    requireRole('operator'),
    parseJsonBody(),
    async (req, res) => {
      const linkId = pathValue(req.params, 'linkId', 'link_id');
      validate(emptyBody, req.body ?? {});
      const link = await repository.findLink(linkId);
      if (!link) throw new AppError('link_not_found', 'payment link not found');
      const done = await audited(
        res,
        { action: 'payment_link.deactivate', targetType: 'payment_link', targetId: linkId },
        () => linkView(link.appId, linkId),
        () => checkout.deactivateLink(link.appId, linkId),
        async () => linkView(link.appId, linkId),
      );
      sendData(res, { ...(await checkout.linkView(done)), app_id: link.appId });
    },
  );

  // ---- a merchant's standing codes ----

  const codes = '/merchants/:merchantId/codes';
  const codeView = async (appId: string, merchantId: string, codeId: string) => ({
    ...(await checkout.codeView(await checkout.findCode(appId, merchantId, codeId))),
    app_id: appId,
  });

  router.get(codes, async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantId', 'merchant_id');
    const q = validate(listCodesQuery, req.query) as { app_id?: string };
    const appId = appOf(q);
    const { rows } = await repository.listCodes(appId, merchantId, { limit: 100, offset: 0 });
    sendData(res, {
      list: await Promise.all(rows.map(async (c) => ({ ...(await checkout.codeView(c)), app_id: appId }))),
    });
  });

  router.post(codes, requireRole('operator'), parseJsonBody(), async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantId', 'merchant_id');
    const body = validate(consoleCodeBody, req.body ?? {}) as {
      app_id: string;
    } & Parameters<CheckoutService['createCode']>[2];
    const { app_id: appId, ...fields } = body;
    const code = await audited(
      res,
      { action: 'merchant_code.create', targetType: 'merchant', targetId: merchantId },
      async () => undefined,
      () => checkout.createCode(appId, merchantId, fields),
      async (c) => codeView(appId, merchantId, c.codeId),
    );
    sendData(res, await codeView(appId, merchantId, code.codeId));
  });

  router.post(`${codes}/:codeId/disable`, requireRole('operator'), parseJsonBody(), async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantId', 'merchant_id');
    const codeId = pathValue(req.params, 'codeId', 'code_id');
    const { app_id: appId } = validate(appBody, req.body ?? {}) as { app_id: string };
    await audited(
      res,
      { action: 'merchant_code.disable', targetType: 'merchant_code', targetId: codeId },
      () => codeView(appId, merchantId, codeId),
      () => checkout.disableCode(appId, merchantId, codeId),
      async () => codeView(appId, merchantId, codeId),
    );
    sendData(res, await codeView(appId, merchantId, codeId));
  });

  // Printable, as the API's: the code's URL at a size a printer keeps sharp.
  router.get(`${codes}/:codeId/qr.png`, async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantId', 'merchant_id');
    const codeId = pathValue(req.params, 'codeId', 'code_id');
    const appId = appOf(validate(listCodesQuery, req.query) as { app_id?: string });
    const code = await checkout.findCode(appId, merchantId, codeId);
    const png = await toBuffer(checkout.codeUrl(code.codeId), {
      type: 'png',
      errorCorrectionLevel: 'Q',
      margin: 4,
      width: 1024,
    });
    res
      .status(200)
      .type('image/png')
      .set('Cache-Control', 'no-store')
      .set('Content-Disposition', `attachment; filename="${code.codeId}.png"`)
      .send(png);
  });

  return router;
}
