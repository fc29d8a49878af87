import type { Response, Router } from 'express';
import Joi from 'joi';
import type { Client } from '@temporalio/client';
import { escapeHtml } from '../../platform/http/html';
import {
  AuthorizationRefused,
  completeAuthorization,
  startAuthorization,
  type AuthorizationDeps,
} from './authorization';
import { AppError } from '../../platform/errors';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { ChannelError } from '../../channels/errors';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { ACCOUNT_KINDS, accountView, attachSchema, claimOf } from './accounts';
import { ChannelAccountRepository, NoSuchMerchantError } from './account-repository';
import { attachMerchantAccount, type AttachDeps } from './attach';
import { databaseError, log, merchantNotFound } from './http-errors';
import { MerchantRepository } from './repository';

/** What the channel-account routes need. */
export interface AccountRoutesDeps {
  db: Database;
  channels: ChannelRegistry;
  payloadKeys: Keyring;
  /** Starts the workflow that keeps an authorised account's token fresh. */
  client: Client;
  taskQueue: string;
  /** How channels reach this service: the authorisation page sends the merchant back here. */
  publicBaseUrl: string;
}

/** `POST …/channel-accounts/alipay/authorization`'s body. */
export const authorizationSchema = Joi.object({
  redirect_url: Joi.string()
    .max(1024)
    .uri({ scheme: ['http', 'https'] })
    .description('Where the merchant’s browser goes once the authorisation is saved (or refused).')
    .example('https://merchant.example/alipay/authorised'),
  expected_user_id: Joi.string()
    .pattern(/^2088\d{12}$/)
    .messages({
      'string.pattern.base': 'expected_user_id must be an Alipay user id: 2088 followed by 12 digits',
    })
    .description(
      'The Alipay user id (2088…) the merchant is to authorise as, when you know it: an authorisation by another Alipay account is refused, so a link that reached someone else gives the merchant nothing.',
    )
    .example('2088102146225135'),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .description('Where `merchant.channel_account.updated` is posted: when it is saved, and if it expires.')
    .example('https://merchant.example/hooks/accounts'),
})
  .required()
  .unknown(false);

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The page a merchant's browser is shown when durapay keeps it (no redirect_url, or a refusal). */
function authorizationPage(res: Response, status: number, title: string, text: string): void {
  res
    .status(status)
    .type('html')
    .set('Content-Security-Policy', PAGE_CSP)
    .set('Cache-Control', 'no-store')
    .set('Referrer-Policy', 'no-referrer')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}</style></head>` +
        `<body><h1 id="title">${escapeHtml(title)}</h1><p id="message">${escapeHtml(text)}</p></body></html>`,
    );
}

/** The channel named in the path: one durapay has accounts for (SPEC §5.8). */
function channelOf(params: Record<string, unknown>): string {
  const code = pathValue(params, 'channel_code', 'channel_code');
  if (!Object.hasOwn(ACCOUNT_KINDS, code)) {
    throw new AppError(
      'invalid_param',
      `channel_code must be one of ${Object.keys(ACCOUNT_KINDS).join(', ')}`,
    );
  }
  return code;
}

/** SPEC §5.8: a merchant's accounts at the channels — list, attach, detach. */
export function channelAccountRoutes(deps: AccountRoutesDeps): Router {
  const router = apiRouter();
  const merchants = new MerchantRepository(deps.db);
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  const attach: AttachDeps = { channels: deps.channels, accounts };
  const authorization: AuthorizationDeps = { ...deps, accounts };

  router.post(
    '/api/v1/merchant/:merchantID/channel-accounts/alipay/authorization',
    parseJsonBody(),
    async (req, res) => {
      const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
      const body = validate(authorizationSchema, req.body ?? {}) as {
        redirect_url?: string;
        notify_url?: string;
        expected_user_id?: string;
      };
      const { appId } = currentApp(res);
      try {
        if (!(await merchants.find(appId, merchantId))) throw merchantNotFound();
      } catch (err) {
        throw databaseError(res, err, 'read the merchant');
      }
      let started;
      try {
        started = await startAuthorization(authorization, {
          appId,
          merchantId,
          channelCode: 'alipay',
          redirectUrl: body.redirect_url ?? null,
          notifyUrl: body.notify_url ?? null,
          expectedUserId: body.expected_user_id ?? null,
        });
      } catch (err) {
        throw databaseError(res, err, 'start the authorisation');
      }
      log(res).info('channel authorisation started', { merchant_id: merchantId, channel_code: 'alipay' });
      sendData(res, { authorize_url: started.authorizeUrl, expires_at: started.expiresAt.toISOString() });
    },
  );

  // The channel's page sends the merchant's browser here: no app signs it, the state vouches.
  router.get('/api/v1/channels/alipay/app-auth', async (req, res) => {
    const one = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');
    const state = one('state');
    const code = one('app_auth_code');
    if (state === '' || code === '') {
      authorizationPage(
        res,
        400,
        'Authorisation not completed',
        state === ''
          ? 'This page was opened without the authorisation’s state: open the link durapay gave you again.'
          : 'Alipay sent no authorisation code: the authorisation was cancelled or refused. Nothing was saved.',
      );
      return;
    }
    let done;
    try {
      done = await completeAuthorization(authorization, { channelCode: 'alipay', state, code });
    } catch (err) {
      if (err instanceof AuthorizationRefused) {
        log(res).warn('channel authorisation refused', { channel_code: 'alipay', reason: err.message });
        authorizationPage(res, err.status, 'Authorisation not completed', err.message);
        return;
      }
      log(res).error('channel authorisation failed', {
        error: err instanceof Error ? err.stack : String(err),
      });
      authorizationPage(
        res,
        500,
        'Authorisation not completed',
        'durapay could not save the authorisation. Ask for a new link.',
      );
      return;
    }
    log(res).info('channel account authorised', { merchant_id: done.merchantId, channel_code: 'alipay' });
    if (done.followError) {
      log(res).error('could not start the channel token workflow: the token will not be refreshed', {
        merchant_id: done.merchantId,
        error: done.followError,
      });
    }
    if (done.redirectUrl) {
      const to = new URL(done.redirectUrl);
      to.searchParams.set('merchant_id', done.merchantId);
      to.searchParams.set('channel_code', 'alipay');
      to.searchParams.set('result', 'authorized');
      res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer').redirect(303, to.toString());
      return;
    }
    authorizationPage(
      res,
      200,
      'Authorisation saved',
      `Alipay account of merchant ${done.merchantId} is authorised. You can close this page.`,
    );
  });

  router.get('/api/v1/merchant/:merchantID/channel-accounts', async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
    const { appId } = currentApp(res);
    let list;
    try {
      if (!(await merchants.find(appId, merchantId))) throw merchantNotFound();
      list = await accounts.attached(appId, merchantId);
    } catch (err) {
      throw databaseError(res, err, 'read the channel accounts');
    }
    sendData(res, { merchant_id: merchantId, list: list.map(accountView) });
  });

  router.put(
    '/api/v1/merchant/:merchantID/channel-accounts/:channel_code',
    parseJsonBody(),
    async (req, res) => {
      const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
      const channelCode = channelOf(req.params);
      const claim = claimOf(
        channelCode,
        validate(attachSchema(channelCode), req.body) as Record<string, string>,
      );
      const { appId } = currentApp(res);
      try {
        if (!(await merchants.find(appId, merchantId))) throw merchantNotFound();
      } catch (err) {
        throw databaseError(res, err, 'read the merchant');
      }
      // The same body again answers the account attached without asking the channel (attachAccount).
      try {
        const { account } = await attachMerchantAccount(
          { ...attach, client: deps.client, taskQueue: deps.taskQueue },
          { appId, merchantId, channelCode, claim },
          log(res),
        );
        sendData(res, accountView(account));
      } catch (err) {
        if (err instanceof NoSuchMerchantError) throw merchantNotFound();
        if (err instanceof AppError || err instanceof ChannelError) throw err;
        throw databaseError(res, err, 'save the channel account');
      }
    },
  );

  router.delete('/api/v1/merchant/:merchantID/channel-accounts/:channel_code', async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
    const channelCode = channelOf(req.params);
    const { appId } = currentApp(res);
    let detached;
    try {
      detached = await accounts.detach(appId, merchantId, channelCode);
    } catch (err) {
      if (err instanceof NoSuchMerchantError) throw merchantNotFound();
      throw databaseError(res, err, 'detach the channel account');
    }
    if (!detached) {
      throw new AppError(
        'order_not_found',
        `merchant ${merchantId} has no account at channel ${channelCode}`,
        404,
      );
    }
    log(res).info('channel account detached', { merchant_id: merchantId, channel_code: channelCode });
    sendData(res, {
      merchant_id: merchantId,
      channel_code: channelCode,
      detached_at: detached.detachedAt?.toISOString() ?? null,
    });
  });

  return router;
}
