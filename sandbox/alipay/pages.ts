/**
 * The Alipay gateway's pages: the cashier (收银台) a qr_code, a page or wap payment URL or a
 * trade_no leads the buyer to, the error page a page payment shows when its request is refused,
 * and the merchant's consent to an app (第三方应用授权, app-auth-page.ts). Plain HTML forms and no
 * script, so the Content-Security-Policy forbids every script; only escaped text varies.
 */
import { checkoutStyle, escapeHtml } from '../html';

/** No script at all; forms post back to this origin only. */
export const CASHIER_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const STYLE = checkoutStyle('#1677ff', `  .error { color: #b00020; }`);

export interface CashierView {
  subject: string;
  totalAmount: string;
  outTradeNo: string;
  tradeNo: string;
  method: string;
  tradeStatus: string;
  payable: boolean;
  /** The merchant's page to go back to, once paid (page and wap payments with a return_url). */
  returnLink?: string;
}

function button(result: string, label: string, cls: string, enabled: boolean): string {
  return `<form method="post"><input type="hidden" name="result" value="${result}"><button class="${cls}" type="submit"${enabled ? '' : ' disabled'}>${label}</button></form>`;
}

function page(title: string, body: string, heading = 'durapay Alipay sandbox cashier'): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(heading)}</h1>
${body}
</body>
</html>
`;
}

export function cashierPage(view: CashierView): string {
  const back = view.returnLink
    ? `<p><a href="${escapeHtml(view.returnLink)}">Return to the merchant</a></p>`
    : '';
  return page(
    `Alipay sandbox — ${view.subject}`,
    `<p>${escapeHtml(view.subject)}</p>
<p class="amount">¥${escapeHtml(view.totalAmount)} <small>CNY</small></p>
<dl>
  <dt>out_trade_no</dt><dd>${escapeHtml(view.outTradeNo)}</dd>
  <dt>trade_no</dt><dd>${escapeHtml(view.tradeNo)}</dd>
  <dt>method</dt><dd>${escapeHtml(view.method)}</dd>
  <dt>trade_status</dt><dd>${escapeHtml(view.tradeStatus)}</dd>
</dl>
<p>
${button('success', 'Pay', 'pay', view.payable)}
${button('fail', 'Fail', 'fail', view.payable)}
</p>
${back}`,
  );
}

export function errorPage(code: string, subCode: string, subMsg: string): string {
  return page(
    'Alipay sandbox — request refused',
    `<p class="error">The payment request was refused.</p>
<dl>
  <dt>code</dt><dd>${escapeHtml(code)}</dd>
  <dt>sub_code</dt><dd>${escapeHtml(subCode)}</dd>
  <dt>sub_msg</dt><dd>${escapeHtml(subMsg)}</dd>
</dl>`,
  );
}

export function notFoundPage(): string {
  return page(
    'Not found',
    '<p>This trade does not exist (the sandbox keeps trades in memory; was it restarted?).</p>',
  );
}

const AUTH_HEADING = 'durapay Alipay sandbox — app authorisation';

export interface AppAuthView {
  /** The app asking to act for the merchant. */
  appId: string;
  redirectUri: string;
  state?: string;
  /** Merchants that authorised the app before, offered again beside a new one. */
  merchants: { userId: string; authAppId: string }[];
}

const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

/**
 * The merchant's consent: form `app-auth` posts back to this page with the merchant chosen in
 * `user_id` (empty: a new merchant) and `action` from the button pressed, `authorize` or `cancel`.
 */
export function appAuthPage(view: AppAuthView): string {
  const options = view.merchants
    .map(
      (m) =>
        `<option value="${escapeHtml(m.userId)}">${escapeHtml(m.userId)} (app ${escapeHtml(m.authAppId)})</option>`,
    )
    .join('');
  return page(
    `Alipay sandbox — authorise app ${view.appId}`,
    `<p>Authorise app <strong>${escapeHtml(view.appId)}</strong> to act for your shop</p>
<form id="app-auth" method="post" action="appToAppAuth.htm">
${hidden('app_id', view.appId)}
${hidden('redirect_uri', view.redirectUri)}
${view.state === undefined ? '' : hidden('state', view.state)}
<p><label for="user_id">Your shop</label>
<select id="user_id" name="user_id"><option value="" selected>A new merchant</option>${options}</select></p>
<p>It goes back to <code>${escapeHtml(view.redirectUri)}</code>.</p>
<button id="authorize" class="pay" type="submit" name="action" value="authorize">Authorise</button>
<button id="cancel" type="submit" name="action" value="cancel">Cancel</button>
</form>`,
    AUTH_HEADING,
  );
}

export function appAuthErrorPage(reason: string): string {
  return page(
    'Alipay sandbox — authorisation refused',
    `<p class="error">This authorisation request cannot be shown: ${escapeHtml(reason)}.</p>`,
    AUTH_HEADING,
  );
}
