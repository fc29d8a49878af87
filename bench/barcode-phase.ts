/**
 * The barcode phase (SPEC §14): what a till waits for. Barcode creates whose sandbox buyer pays
 * at once, arriving open-loop at the open phases' shares of the floor's throughput; the latency
 * is the till's answer time (the channel's answer included), each answer checked `paid`.
 */
import { sandboxAuthCode } from '../src/channels/sandbox';
import type { PhaseResult } from './lib/report';
import { measureOpen, resetOrders, type Bench } from './harness';
import { openRates, orderInput } from './phases';

export async function barcodePhases(b: Bench, out: PhaseResult[]): Promise<void> {
  for (const { pct, rate, floorRps } of openRates(b, out)) {
    await resetOrders(b);
    out.push(
      await measureOpen(
        b,
        `barcode-${pct}`,
        rate,
        pct / 100,
        `signed POST /api/v1/pay/unified-order with pay_method barcode (a sandbox buyer who pays at once) arriving at ${rate}/s (${pct} % of the floor's ${floorRps.toFixed(1)}/s), until the till's answer, paid`,
        async () => {
          const t0 = performance.now();
          const order = await b.sdk.createOrder({
            ...orderInput(b, `b${pct}`),
            pay_method: 'barcode',
            auth_code: sandboxAuthCode('pays'),
            device_id: 'bench-till',
          });
          if (order.status !== 'paid') throw new Error(`a barcode create answered ${JSON.stringify(order)}`);
          return performance.now() - t0;
        },
      ),
    );
  }
}
