/**
 * The pages a person opens in a browser: the buyer's checkout, the payee's confirmation of a
 * transfer and the merchant's contract.
 */
import { escapeHtml, formatYuan } from './html';
import type { OrderRow, TransferRow } from './store';

const STYLE = `
  body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.2rem; color: #555; }
  .amount { font-size: 2.4rem; margin: 0.5rem 0 1.5rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: 0.3rem 1rem; font-size: 0.9rem; }
  dt { color: #777; }
  button { font-size: 1rem; padding: 0.6rem 1.4rem; margin-right: 0.6rem; border-radius: 6px; border: 1px solid #999; cursor: pointer; }
  button.pay { background: #1a7f37; color: #fff; border-color: #1a7f37; }
  .qr { display: block; width: 10rem; height: 10rem; margin: 0 0 1rem; image-rendering: pixelated; }
  #outcome { margin-top: 1.5rem; font-weight: 600; min-height: 1.5em; }
`;

/**
 * The checkout a pay_url opens, with the QR code a phone would scan to open it. Its buttons POST
 * {"result": …} to the page's own URL, which is what a test or a script does directly. The
 * script is static; only escaped text varies.
 */
export function checkoutPage(order: OrderRow, nonce: string, qrImage: string): string {
  const open = order.status === 'pending';
  const stateLine = open ? '' : `This order is ${order.status}.`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox checkout — ${escapeHtml(order.subject)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>durapay sandbox checkout</h1>
<p>${escapeHtml(order.subject)}</p>
<p class="amount">¥${formatYuan(order.amount)} <small>${escapeHtml(order.currency)}</small></p>
<img class="qr" src="${escapeHtml(qrImage)}" alt="QR code of this checkout: scan it to pay on a phone">
<dl>
  <dt>Order</dt><dd>${escapeHtml(order.trade_no)}</dd>
  <dt>Pay method</dt><dd>${escapeHtml(order.pay_method)}</dd>
  <dt>Status</dt><dd id="status">${escapeHtml(order.status)}</dd>
</dl>
<p>
  <button class="pay" data-result="success"${open ? '' : ' disabled'}>Pay</button>
  <button class="fail" data-result="fail"${open ? '' : ' disabled'}>Fail</button>
</p>
<p id="outcome">${escapeHtml(stateLine)}</p>
<script nonce="${nonce}">
  const outcome = document.getElementById('outcome');
  const status = document.getElementById('status');
  const buttons = document.querySelectorAll('button');
  for (const button of buttons) {
    button.addEventListener('click', async () => {
      buttons.forEach((b) => (b.disabled = true));
      outcome.textContent = 'Sending…';
      try {
        const res = await fetch(window.location.pathname, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ result: button.dataset.result }),
        });
        const data = await res.json();
        if (!res.ok) {
          outcome.textContent = 'Refused: ' + data.error;
        } else if (data.status === 'paid') {
          status.textContent = 'paid';
          outcome.textContent = 'Payment succeeded. You may close this page.';
        } else {
          status.textContent = data.status;
          outcome.textContent = 'Payment failed; the order is still ' + data.status + '.';
          buttons.forEach((b) => (b.disabled = data.status !== 'pending'));
        }
      } catch (err) {
        outcome.textContent = 'Could not reach the sandbox: ' + err;
        buttons.forEach((b) => (b.disabled = false));
      }
    });
  }
</script>
</body>
</html>
`;
}

/**
 * Where a transfer's package_info leads: the payee confirms it (then it is paid) or lets it
 * expire (then it fails, `OVERDUE_CLOSE`, as WeChat Pay closes it), as a WeChat user does in wx.requestMerchantTransfer. Its buttons
 * POST {"result": "confirm" | "expire"} to the page's own URL, which is what a test does directly.
 */
export function transferConfirmPage(transfer: TransferRow, nonce: string): string {
  const open = transfer.status === 'wait_user_confirm';
  const stateLine = open ? '' : `This transfer is ${transfer.status}.`;
  const deadline = transfer.confirm_deadline ? transfer.confirm_deadline.toISOString() : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox transfer — ${escapeHtml(transfer.remark)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>durapay sandbox: money for you</h1>
<p>${escapeHtml(transfer.remark)}</p>
<p class="amount">¥${formatYuan(transfer.amount)}</p>
<dl>
  <dt>Transfer</dt><dd>${escapeHtml(transfer.transfer_no)}</dd>
  <dt>Confirm by</dt><dd>${escapeHtml(deadline)}</dd>
  <dt>Status</dt><dd id="status">${escapeHtml(transfer.status)}</dd>
</dl>
<p>
  <button class="pay" data-result="confirm"${open ? '' : ' disabled'}>Confirm</button>
  <button class="expire" data-result="expire"${open ? '' : ' disabled'}>Let it expire</button>
</p>
<p id="outcome">${escapeHtml(stateLine)}</p>
<script nonce="${nonce}">
  const outcome = document.getElementById('outcome');
  const status = document.getElementById('status');
  const buttons = document.querySelectorAll('button');
  for (const button of buttons) {
    button.addEventListener('click', async () => {
      buttons.forEach((b) => (b.disabled = true));
      outcome.textContent = 'Sending…';
      try {
        const res = await fetch(window.location.pathname, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ result: button.dataset.result }),
        });
        const data = await res.json();
        if (!res.ok) {
          outcome.textContent = 'Refused: ' + data.error;
        } else {
          status.textContent = data.status;
          outcome.textContent =
            data.status === 'failed'
              ? 'You let the transfer expire; it is closed.'
              : 'Confirmed: the money is on its way. You may close this page.';
        }
      } catch (err) {
        outcome.textContent = 'Could not reach the sandbox: ' + err;
        buttons.forEach((b) => (b.disabled = false));
      }
    });
  }
</script>
</body>
</html>
`;
}

export function notFoundPage(what: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found</title><style>${STYLE}</style></head>
<body><h1>durapay sandbox</h1><p>${escapeHtml(what)} does not exist.</p></body></html>
`;
}

/** Where a `to_be_signed` application's sign_url leads; signing is implicit in the sandbox. */
export function contractPage(applicationNo: string, merchantName: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandbox contract</title><style>${STYLE}</style></head>
<body>
<h1>durapay sandbox contract</h1>
<p>Merchant agreement for <strong>${escapeHtml(merchantName)}</strong> (application ${escapeHtml(applicationNo)}).</p>
<p>The sandbox treats this contract as signed: the next audit poll reports the application finished.</p>
</body></html>
`;
}
