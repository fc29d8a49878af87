/**
 * The checkout phase (SPEC §15): what a buyer who opens a payment link waits for. Two open-loop
 * phases at the open phases' shares of the floor's throughput, each against a link of its own:
 * `checkout-page`, GET of the link's page in a plain browser until its first byte (fetch answers
 * at the headers: the QR code is rendered before them); and `checkout-order`, the H5 button's POST,
 * which takes a place in the link under its lock and makes the order at the sandbox channel,
 * until the redirect to the channel's page.
 */
import type { PhaseResult } from './lib/report';
import { measureOpen, resetOrders, type Bench } from './harness';
import { openRates } from './phases';

const PLAIN_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

async function benchLink(b: Bench, label: string): Promise<string> {
  const link = await b.sdk.createPaymentLink({
    merchant_link_no: `bench-${b.runTag}-${label}`,
    amount: 990,
    subject: 'durapay bench link',
    notify_url: b.receiver.url,
    max_payments: 10_000,
  });
  return link.url;
}

export async function checkoutPhases(b: Bench, out: PhaseResult[]): Promise<void> {
  for (const { pct, rate, floorRps } of openRates(b, out)) {
    await resetOrders(b);
    const pageUrl = await benchLink(b, `page-${pct}`);
    out.push(
      await measureOpen(
        b,
        `checkout-page-${pct}`,
        rate,
        pct / 100,
        `GET of a payment link's page in a plain browser arriving at ${rate}/s (${pct} % of the floor's ${floorRps.toFixed(1)}/s), until its first byte`,
        async () => {
          const t0 = performance.now();
          const res = await fetch(pageUrl, { headers: { 'User-Agent': PLAIN_UA } });
          const ms = performance.now() - t0;
          const html = await res.text();
          if (res.status !== 200 || !html.includes('class="qr"')) {
            throw new Error(`the link's page answered ${res.status}`);
          }
          return ms;
        },
      ),
    );
    await resetOrders(b);
    const orderUrl = `${await benchLink(b, `order-${pct}`)}/h5`;
    out.push(
      await measureOpen(
        b,
        `checkout-order-${pct}`,
        rate,
        pct / 100,
        `POST of a payment link's H5 button (a hold on the link, an order at the sandbox channel) arriving at ${rate}/s (${pct} % of the floor's ${floorRps.toFixed(1)}/s), until the redirect to the channel's page`,
        async () => {
          const t0 = performance.now();
          const res = await fetch(orderUrl, {
            method: 'POST',
            redirect: 'manual',
            headers: { 'User-Agent': PLAIN_UA, 'Content-Type': 'application/x-www-form-urlencoded' },
            body: 'channel=sandbox',
          });
          const ms = performance.now() - t0;
          await res.body?.cancel();
          const to = res.headers.get('location') ?? '';
          if (res.status !== 303 || to.includes('/checkout/')) {
            throw new Error(`the H5 button answered ${res.status} ${to.replace(/\?.*$/, '')}`);
          }
          return ms;
        },
      ),
    );
  }
}
