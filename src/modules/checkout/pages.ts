/**
 * The hosted checkout's pages (SPEC §15): server-rendered HTML, mobile first, in Chinese or English
 * by the browser's Accept-Language (`?lang=zh|en` overrides). One small script of this origin
 * (page-script.ts) calls the wallet's bridge and follows the order; no other script, no third
 * party, and a Content-Security-Policy that holds the page to that.
 */
import { escapeHtml } from '../../platform/http/html';
import type { CheckoutMessage } from './service';

export type Lang = 'zh' | 'en';

/** The page's CSP: its own script and styles, data: images (the QR), requests to its own origin only. */
export const CHECKOUT_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self' https: http:; base-uri 'none'; frame-ancestors 'none'";

/** The language a request asks for: `?lang=` first, then Accept-Language (zh… is Chinese). */
export function langOf(query: unknown, acceptLanguage: string | undefined): Lang {
  if (query === 'zh' || query === 'en') return query;
  const first = (acceptLanguage ?? '').split(',')[0]?.trim().toLowerCase() ?? '';
  return first.startsWith('zh') ? 'zh' : 'en';
}

const WORDS = {
  zh: {
    title: '付款',
    pay: '立即支付',
    scan: '请用微信或支付宝扫码付款',
    or: '或在本机浏览器中支付',
    h5: { wechatpay: '微信支付', alipay: '支付宝', sandbox: '沙箱支付' } as Record<string, string>,
    paying: '请在钱包中完成付款…',
    waiting: '正在确认付款…',
    paid: '付款成功',
    closed: '订单已关闭',
    cancelled: '已取消付款，可再次支付',
    failed: '付款未完成，请重试',
    noBridge: '请在微信或支付宝中打开此页面',
    order: '订单号',
    amount: '金额（元）',
    note: '备注（选填）',
    next: '付款',
    badAmount: (min: string, max: string) => `请输入 ${min} 至 ${max} 之间的金额`,
    badNote: '备注最多 64 个字',
    messages: {
      not_found: ['链接不存在', '请向商家确认付款链接。'],
      deactivated: ['链接已停用', '商家已停用此付款链接。'],
      expired: ['链接已过期', '此付款链接已超过有效期。'],
      completed: ['已付款', '此付款链接的付款次数已用完。'],
      taken: ['有人正在付款', '此链接正由其他买家付款，请几分钟后再试。'],
      state_invalid: ['无法验证此次授权', '请重新打开付款链接。'],
      state_used: ['此次授权已使用', '请重新打开付款链接。'],
      sign_in_failed: ['授权失败', '钱包未能确认您的身份，请重新打开付款链接。'],
      no_channel: ['暂不支持此钱包', '商家未开通此支付方式，请换用其他钱包扫码。'],
      create_failed: ['暂时无法下单', '支付渠道暂时不可用，请稍后重试。'],
      order_not_found: ['订单不存在', '请向商家确认付款链接。'],
      code_not_found: ['收款码不存在', '请向商家确认收款码。'],
      code_disabled: ['收款码已停用', '商家已停用此收款码。'],
      order_closed: ['订单已关闭', '此订单已关闭或已过期，请向商家重新获取付款码。'],
      order_taken: ['订单正在支付', '此订单已在其他钱包或浏览器中发起支付，请在原处完成付款。'],
    } as Record<CheckoutMessage | 'order_not_found', [string, string]>,
  },
  en: {
    title: 'Pay',
    pay: 'Pay now',
    scan: 'Scan with WeChat or Alipay to pay',
    or: 'or pay in this browser',
    h5: { wechatpay: 'WeChat Pay', alipay: 'Alipay', sandbox: 'Sandbox' } as Record<string, string>,
    paying: 'Finish the payment in your wallet…',
    waiting: 'Confirming the payment…',
    paid: 'Payment succeeded',
    closed: 'This order is closed',
    cancelled: 'Payment cancelled: you can pay again',
    failed: 'The payment did not go through: try again',
    noBridge: 'Open this page in WeChat or Alipay',
    order: 'Order',
    amount: 'Amount (yuan)',
    note: 'Note (optional)',
    next: 'Pay',
    badAmount: (min: string, max: string) => `Enter an amount from ${min} to ${max}`,
    badNote: 'A note is at most 64 characters',
    messages: {
      not_found: ['No such link', 'Ask the merchant for the payment link.'],
      deactivated: ['This link is no longer active', 'The merchant has deactivated this payment link.'],
      expired: ['This link has expired', 'The payment link is past its expiry.'],
      completed: ['Already paid', 'This payment link has taken all the payments it may.'],
      taken: [
        'Someone is paying',
        'Another buyer is paying this link right now: try again in a few minutes.',
      ],
      state_invalid: ['This sign-in cannot be verified', 'Open the payment link again.'],
      state_used: ['This sign-in was already used', 'Open the payment link again.'],
      sign_in_failed: [
        'Sign-in failed',
        'Your wallet could not confirm who you are: open the payment link again.',
      ],
      no_channel: [
        'This wallet is not accepted here',
        'The merchant does not take this wallet: scan with another.',
      ],
      create_failed: [
        'The payment cannot start now',
        'The payment channel is not available: try again shortly.',
      ],
      order_not_found: ['No such order', 'Ask the merchant for the payment link.'],
      code_not_found: ['No such code', 'Ask the merchant for their payment code.'],
      code_disabled: ['This code is no longer in use', 'The merchant has disabled this payment code.'],
      order_closed: [
        'This order is closed',
        'The order was closed or has expired: ask the merchant for a new one.',
      ],
      order_taken: [
        'This order is being paid',
        'The payment of this order was started in another wallet or browser: finish it there.',
      ],
    } as Record<CheckoutMessage | 'order_not_found', [string, string]>,
  },
};

export const yuanOf = (fen: number) => `¥${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`;

function layout(lang: Lang, title: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="${lang === 'zh' ? 'zh-CN' : 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>
  :root { color-scheme: light; font-family: -apple-system, BlinkMacSystemFont, "PingFang SC", "Helvetica Neue", "Microsoft YaHei", sans-serif; }
  body { margin: 0; background: #f5f6f8; color: #1f2329; }
  main { max-width: 28rem; margin: 0 auto; padding: 2rem 1.25rem; }
  .card { background: #fff; border-radius: 12px; padding: 1.5rem 1.25rem; box-shadow: 0 1px 3px rgba(0,0,0,.06); text-align: center; }
  h1 { font-size: 1.15rem; font-weight: 600; margin: 0 0 .5rem; }
  .amount { font-size: 2.25rem; font-weight: 600; margin: .5rem 0 1rem; letter-spacing: .02em; }
  .muted { color: #646a73; font-size: .9rem; }
  .qr { width: 12rem; height: 12rem; margin: .5rem auto 1rem; display: block; image-rendering: pixelated; }
  button { width: 100%; font-size: 1.05rem; padding: .85rem; border: 0; border-radius: 8px; margin: .4rem 0; color: #fff; background: #1677ff; }
  button.wechatpay { background: #07c160; } button.alipay { background: #1677ff; } button.sandbox { background: #595959; }
  button[disabled] { opacity: .5; }
  #outcome { min-height: 1.5rem; margin-top: 1rem; font-weight: 600; }
  #outcome.ok { color: #07a35a; } #outcome.bad { color: #d4380d; }
  form { margin: 0; }
  label.field { display: block; text-align: left; font-size: .9rem; color: #646a73; margin: .75rem 0; }
  label.field input { display: block; width: 100%; box-sizing: border-box; font-size: 1.4rem; padding: .6rem; margin-top: .3rem; border: 1px solid #d0d3d6; border-radius: 8px; color: #1f2329; }
</style>
</head>
<body><main>${body}</main>${script}</body>
</html>`;
}

export function messagePage(lang: Lang, message: CheckoutMessage | 'order_not_found'): string {
  const [title, text] = WORDS[lang].messages[message];
  return layout(
    lang,
    title,
    `<div class="card" data-message="${message}"><h1>${escapeHtml(title)}</h1><p class="muted">${escapeHtml(text)}</p></div>`,
  );
}

export interface AmountView {
  lang: Lang;
  codeId: string;
  merchantName: string;
  name: string;
  minAmount: number;
  maxAmount: number;
  /** In a wallet: one button (its sign-in follows); elsewhere a button per H5 channel. */
  wallet: boolean;
  h5: string[];
  problem?: 'amount' | 'note';
  amount?: string;
  note?: string;
}

/** A standing code's page: the buyer enters the amount (within the code's bounds) and a note. */
export function amountPage(v: AmountView): string {
  const w = WORDS[v.lang];
  const problem =
    v.problem === 'amount'
      ? w.badAmount(yuanOf(v.minAmount), yuanOf(v.maxAmount))
      : v.problem === 'note'
        ? w.badNote
        : '';
  const buttons = v.wallet
    ? `<button class="sandbox" type="submit">${escapeHtml(w.next)}</button>`
    : v.h5
        .map(
          (code) =>
            `<button class="${escapeHtml(code)}" type="submit" name="channel" value="${escapeHtml(code)}">${escapeHtml(w.h5[code] ?? code)}</button>`,
        )
        .join('');
  return layout(
    v.lang,
    `${w.title} · ${v.merchantName}`,
    `<div class="card">
<h1>${escapeHtml(v.merchantName)}</h1>
<p class="muted">${escapeHtml(v.name)}</p>
<form method="post" action="/checkout/c/${escapeHtml(v.codeId)}">
<label class="field">${escapeHtml(w.amount)}<input name="amount" inputmode="decimal" autocomplete="off" required pattern="\\d{1,9}(\\.\\d{1,2})?" value="${escapeHtml(v.amount ?? '')}"></label>
<label class="field">${escapeHtml(w.note)}<input name="note" maxlength="64" autocomplete="off" value="${escapeHtml(v.note ?? '')}"></label>
<div id="outcome" class="${problem ? 'bad' : ''}" role="status">${escapeHtml(problem)}</div>
${buttons}
</form>
</div>`,
  );
}

export interface LandingView {
  lang: Lang;
  /** Where the H5 buttons post (a link's or an order's page). */
  h5Action: string;
  subject: string;
  amount: number;
  url: string;
  qrImage: string;
  h5: string[];
}

/**
 * A link or a checkout order opened outside a wallet: its QR code to scan with either, and H5
 * pay where offered.
 */
export function landingPage(v: LandingView): string {
  const w = WORDS[v.lang];
  const buttons = v.h5
    .map(
      (code) =>
        `<form method="post" action="${escapeHtml(v.h5Action)}"><input type="hidden" name="channel" value="${escapeHtml(code)}"><button class="${escapeHtml(code)}" type="submit">${escapeHtml(w.h5[code] ?? code)}</button></form>`,
    )
    .join('');
  return layout(
    v.lang,
    `${w.title} · ${v.subject}`,
    `<div class="card">
<h1>${escapeHtml(v.subject)}</h1>
<div class="amount">${yuanOf(v.amount)}</div>
<img class="qr" src="${escapeHtml(v.qrImage)}" alt="QR code of this page">
<p class="muted">${escapeHtml(w.scan)}</p>
${buttons ? `<p class="muted">${escapeHtml(w.or)}</p>${buttons}` : ''}
</div>`,
  );
}

export interface OrderPageView {
  lang: Lang;
  tradeNo: string;
  subject: string;
  amount: number;
  status: string;
  /** Which bridge the script calls, and with what. */
  wallet: 'wechatpay' | 'alipay' | null;
  bridge: Record<string, unknown> | null;
  statusUrl: string;
}

/** A wallet's order: the Pay button the bridge answers, and the order's status as durapay has it. */
export function orderPage(v: OrderPageView): string {
  const w = WORDS[v.lang];
  const payable = v.status === 'pending' && v.wallet !== null && v.bridge !== null;
  const data = {
    wallet: v.wallet,
    bridge: v.bridge,
    statusUrl: v.statusUrl,
    status: v.status,
    words: {
      paying: w.paying,
      waiting: w.waiting,
      paid: w.paid,
      closed: w.closed,
      cancelled: w.cancelled,
      failed: w.failed,
      noBridge: w.noBridge,
    },
  };
  const outcome = v.status === 'pending' ? '' : v.status === 'closed' ? w.closed : w.paid;
  // JSON in a data block is never run; `<` escaped so that no text can close the element.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return layout(
    v.lang,
    `${w.title} · ${v.subject}`,
    `<div class="card">
<h1>${escapeHtml(v.subject)}</h1>
<div class="amount">${yuanOf(v.amount)}</div>
<p class="muted">${escapeHtml(w.order)} <span id="trade-no">${escapeHtml(v.tradeNo)}</span></p>
<button id="pay" class="${v.wallet ?? 'sandbox'}" type="button"${payable ? '' : ' disabled'}>${escapeHtml(w.pay)}</button>
<div id="outcome" class="${v.status === 'pending' ? '' : v.status === 'closed' ? 'bad' : 'ok'}" role="status">${escapeHtml(outcome)}</div>
<span id="status" hidden>${escapeHtml(v.status)}</span>
</div>
<script type="application/json" id="checkout-data">${json}</script>`,
    '<script src="/checkout/assets/checkout.js" defer></script>',
  );
}
