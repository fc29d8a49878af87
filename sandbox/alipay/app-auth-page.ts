/**
 * The authorisation page (第三方应用授权), as Alipay's `openauth.alipay.com/oauth2/appToAppAuth.htm`:
 * the app sends the merchant to `oauth2/appToAppAuth.htm?app_id=&redirect_uri=&state=` under the
 * gateway's mount; the merchant picks its shop (or a new one) and authorises or cancels.
 *
 * Authorise: 302 to redirect_uri with `app_id`, `source=alipay_app_auth`, `app_auth_code` and
 * `state` appended, as Alipay's callback carries them; the code is single-use (app-auth.ts).
 * Cancel: Alipay documents no callback for it, so 302 to redirect_uri with `state` and
 * `error=access_denied`, as OAuth 2.0 does. An unknown app_id or a redirect_uri that is not an
 * absolute http(s) URL is a plain error page, never a redirect.
 *
 * No script, and a CSP that lets the form's redirects go on to wherever the app sends the browser.
 */
import type { Request, Response, Router } from 'express';
import type { AppAuthBook } from './app-auth';
import { pageOrScriptBody } from './http';
import { appAuthErrorPage, appAuthPage } from './pages';

export const APP_AUTH_PAGE_PATH = '/oauth2/appToAppAuth.htm';

const USER_ID = /^2088\d{12}$/;
const MAX_URI = 2048;
const MAX_STATE = 512;

interface AuthRequest {
  appId: string;
  redirect: URL;
  state?: string;
}

/**
 * No form-action: Chromium checks every redirect that follows a form's submission against it, and
 * the app that the redirect_uri names sends the browser on wherever it likes (durapay to the
 * merchant's own redirect_url), an origin this page cannot know.
 */
function csp(): string {
  return "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";
}

/** The request's app, redirect_uri and state, or why it cannot be shown. */
function readRequest(fields: Record<string, unknown>, book: AppAuthBook): AuthRequest | string {
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : undefined);
  const appId = text('app_id');
  if (!appId) return 'app_id is missing';
  if (appId !== book.appId) return 'app_id names no app this gateway knows';
  const uri = text('redirect_uri');
  if (!uri) return 'redirect_uri is missing';
  let redirect: URL;
  try {
    redirect = new URL(uri);
  } catch {
    return 'redirect_uri is not an absolute URL';
  }
  if (uri.length > MAX_URI || !['http:', 'https:'].includes(redirect.protocol)) {
    return 'redirect_uri is not an http(s) URL';
  }
  const state = text('state');
  if (state !== undefined && state.length > MAX_STATE) return 'state is too long';
  return { appId, redirect, ...(state === undefined || state === '' ? {} : { state }) };
}

/** The redirect_uri with `params` appended to its query, its fragment left where it was. */
function back(redirect: URL, params: Record<string, string | undefined>): string {
  const url = new URL(redirect);
  const extra = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  ).toString();
  url.search = url.search ? `${url.search}&${extra}` : `?${extra}`;
  return url.toString();
}

function refuse(res: Response, reason: string): void {
  res.status(400).set('Content-Security-Policy', csp()).type('html').send(appAuthErrorPage(reason));
}

export function appAuthPageRoutes(router: Router, book: AppAuthBook): void {
  router.get(APP_AUTH_PAGE_PATH, (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    const query = Object.fromEntries(new URL(req.originalUrl, 'http://gateway.invalid').searchParams);
    const request = readRequest(query, book);
    if (typeof request === 'string') {
      refuse(res, request);
      return;
    }
    res
      .set('Content-Security-Policy', csp())
      .type('html')
      .send(
        appAuthPage({
          appId: request.appId,
          redirectUri: request.redirect.toString(),
          ...(request.state === undefined ? {} : { state: request.state }),
          merchants: book.merchants(),
        }),
      );
  });

  router.post(APP_AUTH_PAGE_PATH, (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    const { body } = pageOrScriptBody(req);
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const request = readRequest(fields, book);
    if (typeof request === 'string') {
      refuse(res, request);
      return;
    }
    const { state } = request;
    if (fields.action === 'cancel') {
      res.redirect(302, back(request.redirect, { state, error: 'access_denied' }));
      return;
    }
    if (fields.action !== 'authorize') {
      refuse(res, 'action is "authorize" or "cancel"');
      return;
    }
    const chosen = typeof fields.user_id === 'string' && fields.user_id !== '' ? fields.user_id : undefined;
    if (chosen !== undefined && !USER_ID.test(chosen)) {
      refuse(res, 'user_id is a 2088… user id, or empty for a new merchant');
      return;
    }
    const code = book.openCode(request.appId, chosen, Date.now());
    res.redirect(
      302,
      back(request.redirect, {
        app_id: request.appId,
        source: 'alipay_app_auth',
        app_auth_code: code,
        state,
      }),
    );
  });
}
