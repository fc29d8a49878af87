/**
 * The WeChat Pay sandbox's checkout, the page an h5_url or a code_url opens (and, for JSAPI and
 * APP orders, /checkout/prepay/<prepay_id>, since those have no URL of their own), and a transfer's
 * confirmation page (/sandbox/transfer-confirm?package_info=…, what wx.requestMerchantTransfer
 * opens in WeChat). Plain HTML
 * forms and no script, so its Content-Security-Policy can forbid every script; only escaped
 * text varies.
 */
import { checkoutStyle, escapeHtml, formatYuan } from '../html';

/** No script at all; forms post back to this origin only; a QR image is a data: URL. */
export const CHECKOUT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const STYLE = checkoutStyle(
  '#07c160',
  `  .qr { display: block; width: 10rem; height: 10rem; margin: 0 0 1rem; image-rendering: pixelated; }`,
);

export interface CheckoutView {
  description: string;
  outTradeNo: string;
  subMchid: string;
  tradeType: string;
  tradeState: string;
  tradeStateDesc: string;
  total: number;
  payable: boolean;
  /** A PNG data URL of the code_url, for NATIVE orders a phone would scan. */
  qrImage?: string;
  /** Paid: its payer may complain about it (消费者投诉), at this path. */
  complainAt?: string;
  /** The complaints about it so far. */
  complaints: { complaintId: string; state: string; detail: string }[];
}

/** The payer's side of 消费者投诉: complain about a paid order, and what became of each complaint. */
function complaintSection(view: CheckoutView): string {
  if (!view.complainAt) return '';
  const made = view.complaints
    .map(
      (c) =>
        `<li><code>${escapeHtml(c.complaintId)}</code> ${escapeHtml(c.state)}: ${escapeHtml(c.detail)}</li>`,
    )
    .join('');
  return `<h2>Complain about this order</h2>
${made ? `<ul class="complaints">${made}</ul>` : ''}
<form method="post" action="${escapeHtml(view.complainAt)}">
<p><label>What went wrong <textarea name="detail" maxlength="300" required>商品与描述不符，申请退款</textarea></label></p>
<p><label>Problem <select name="problem_type"><option value="REFUND">Refund request</option><option value="SERVICE_NOT_WORK">Service does not work</option><option value="OTHERS">Other</option></select></label></p>
<p><label><input type="checkbox" name="lost_notification" value="1"> Lose its notification (only the list finds it)</label></p>
<button class="payerror" type="submit">Complain</button>
</form>`;
}

function button(result: string, label: string, cls: string, enabled: boolean): string {
  return `<form method="post"><input type="hidden" name="result" value="${result}"><button class="${cls}" type="submit"${enabled ? '' : ' disabled'}>${label}</button></form>`;
}

export function checkoutPage(view: CheckoutView): string {
  const qr = view.qrImage
    ? `<img class="qr" src="${escapeHtml(view.qrImage)}" alt="QR code of this checkout's code_url">`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WeChat Pay sandbox — ${escapeHtml(view.description)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>durapay WeChat Pay sandbox checkout</h1>
<p>${escapeHtml(view.description)}</p>
<p class="amount">¥${formatYuan(view.total)} <small>CNY</small></p>
${qr}
<dl>
  <dt>out_trade_no</dt><dd>${escapeHtml(view.outTradeNo)}</dd>
  <dt>sub_mchid</dt><dd>${escapeHtml(view.subMchid)}</dd>
  <dt>trade_type</dt><dd>${escapeHtml(view.tradeType)}</dd>
  <dt>trade_state</dt><dd>${escapeHtml(view.tradeState)} (${escapeHtml(view.tradeStateDesc)})</dd>
</dl>
<p>
${button('pay', 'Pay', 'pay', view.payable)}
${button('userpaying', 'User paying', 'userpaying', view.payable)}
${button('payerror', 'Payment error', 'payerror', view.payable)}
</p>
${complaintSection(view)}
</body>
</html>
`;
}

export function notFoundPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found</title><style>${STYLE}</style></head>
<body><h1>durapay WeChat Pay sandbox</h1><p>This checkout does not exist (the sandbox keeps orders in memory; was it restarted?).</p></body></html>
`;
}

export interface TransferConfirmView {
  remark: string;
  outBillNo: string;
  transferBillNo: string;
  payer: string;
  openid: string;
  amount: number;
  state: string;
  failReason?: string;
  /** Whether the payee can still act (WAIT_USER_CONFIRM). */
  waiting: boolean;
}

function actionButton(action: string, label: string, cls: string, enabled: boolean): string {
  return `<form method="post"><input type="hidden" name="action" value="${action}"><button class="${cls}" type="submit"${enabled ? '' : ' disabled'}>${label}</button></form>`;
}

/**
 * What WeChat shows the payee of a 商家转账 bill (wx.requestMerchantTransfer with its package):
 * confirm to receive it, or let it expire, as a payee who never confirms does.
 */
export function transferConfirmPage(view: TransferConfirmView): string {
  const reason = view.failReason === undefined ? '' : ` (${escapeHtml(view.failReason)})`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WeChat Pay sandbox — receive ¥${formatYuan(view.amount)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>durapay WeChat Pay sandbox: confirm receipt</h1>
<p>${escapeHtml(view.remark)}</p>
<p class="amount">¥${formatYuan(view.amount)} <small>CNY</small></p>
<dl>
  <dt>out_bill_no</dt><dd>${escapeHtml(view.outBillNo)}</dd>
  <dt>transfer_bill_no</dt><dd>${escapeHtml(view.transferBillNo)}</dd>
  <dt>paid by</dt><dd>${escapeHtml(view.payer)}</dd>
  <dt>openid</dt><dd>${escapeHtml(view.openid)}</dd>
  <dt>state</dt><dd>${escapeHtml(view.state)}${reason}</dd>
</dl>
<p>
${actionButton('confirm', 'Confirm', 'pay', view.waiting)}
${actionButton('expire', 'Let it expire', 'expire', view.waiting)}
</p>
</body>
</html>
`;
}

export function transferNotFoundPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found</title><style>${STYLE}</style></head>
<body><h1>durapay WeChat Pay sandbox</h1><p>No transfer has this package_info (the sandbox keeps transfers in memory; was it restarted?).</p></body></html>
`;
}
