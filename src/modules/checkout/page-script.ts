/**
 * The order page's one script, served from this origin at /checkout/assets/checkout.js (the
 * page's CSP allows no other). ES5, for old in-app browsers. It reads the page's data block,
 * calls the wallet's bridge when the buyer presses Pay (and once on load): WeChat's
 * `WeixinJSBridge.invoke('getBrandWCPayRequest', params)` or Alipay's
 * `AlipayJSBridge.call('tradePay', {tradeNO})`, each once its Ready event has fired. What the
 * bridge says is only a hint: the page then asks durapay for the order's status until it is
 * paid or closed, and only durapay's `paid` shows the payment succeeded.
 */
export const CHECKOUT_SCRIPT = `(function () {
  'use strict';
  var block = document.getElementById('checkout-data');
  if (!block) return;
  var data = JSON.parse(block.textContent || '{}');
  var words = data.words || {};
  var button = document.getElementById('pay');
  var outcome = document.getElementById('outcome');
  var statusText = document.getElementById('status');
  var following = false;

  function say(text, cls) { outcome.textContent = text; outcome.className = cls || ''; }

  function show(status) {
    statusText.textContent = status;
    if (status === 'pending') return false;
    button.disabled = true;
    if (status === 'closed') say(words.closed, 'bad'); else say(words.paid, 'ok');
    return true;
  }

  function follow(tries) {
    following = true;
    var request = new XMLHttpRequest();
    request.open('GET', data.statusUrl);
    request.setRequestHeader('Accept', 'application/json');
    request.onload = function () {
      var status = 'pending';
      try { status = JSON.parse(request.responseText).status; } catch (e) { /* asked again */ }
      if (show(status)) { following = false; return; }
      if (tries > 0) setTimeout(function () { follow(tries - 1); }, 1000); else following = false;
    };
    request.onerror = function () { if (tries > 0) setTimeout(function () { follow(tries - 1); }, 2000); };
    request.send();
  }

  function bridgeOf(wallet) {
    return wallet === 'wechatpay' ? window.WeixinJSBridge : window.AlipayJSBridge;
  }

  function whenReady(wallet, fn) {
    if (bridgeOf(wallet)) { fn(); return; }
    var event = wallet === 'wechatpay' ? 'WeixinJSBridgeReady' : 'AlipayJSBridgeReady';
    document.addEventListener(event, function once() {
      document.removeEventListener(event, once);
      fn();
    });
  }

  function answered(ok, cancelled) {
    button.disabled = false;
    if (ok) { button.disabled = true; say(words.waiting); if (!following) follow(60); }
    else if (cancelled) say(words.cancelled, 'bad');
    else say(words.failed, 'bad');
  }

  function pay() {
    if (!data.wallet || !data.bridge || data.status !== 'pending') return;
    if (!bridgeOf(data.wallet)) say(words.noBridge);
    whenReady(data.wallet, function () {
      button.disabled = true;
      say(words.paying);
      if (data.wallet === 'wechatpay') {
        window.WeixinJSBridge.invoke('getBrandWCPayRequest', data.bridge, function (r) {
          var msg = (r && r.err_msg) || '';
          answered(msg === 'get_brand_wcpay_request:ok', msg === 'get_brand_wcpay_request:cancel');
        });
      } else {
        window.AlipayJSBridge.call('tradePay', data.bridge, function (r) {
          var code = String((r && r.resultCode) || '');
          // 9000 paid, 8000 and 6004 being processed: durapay's status decides either way.
          answered(code === '9000' || code === '8000' || code === '6004', code === '6001');
        });
      }
    });
  }

  button.addEventListener('click', pay);
  if (!show(data.status)) pay();
})();
`;
