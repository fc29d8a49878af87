/**
 * `npm run chaos -- --scenario barcode`: tills take barcode payments (SPEC §14) from sandbox
 * buyers of every kind while the worker is killed where a buyer may be charged with the order
 * not knowing it: after the channel took the payment and before the order heard of it, and
 * before and after a reverse at the channel. Then every order ends, and the money is counted at
 * the channel: what the sandbox keeps is exactly the orders durapay says are paid, and each was
 * asked of the channel once.
 */
import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import type { WebhookReceiver } from '../../bench/lib/receiver';
import { say } from '../../bench/lib/cli';
import { progressBar } from '../../bench/lib/progress';
import { sandboxAuthCode, type SandboxBuyer } from '../../src/channels/sandbox';
import { BARCODE_HOLDS, killAtHolds, killReport, type HoldKill, type HoldRunOptions } from './holds';
import { byAnswer, listCounts, writeReport } from './report';
import { decided, pick, type Answer, type ShopperStats } from './shopper';

/** The buyers a till meets, and how often: most pay, the rest are every way a payment goes wrong. */
const BUYERS: [SandboxBuyer, number][] = [
  ['pays', 4],
  ['confirms_later', 2],
  ['never_confirms', 2],
  ['answer_lost', 1],
  ['confirms_at_reverse', 1],
  ['reverse_refused', 1],
  ['insufficient', 1],
];

export interface BarcodeJourney {
  merchantOrderNo: string;
  buyer: SandboxBuyer;
  /** The create's deciding answer (`undefined`: none within the deadline). */
  created?: Answer;
}

export type BarcodeRunOptions = HoldRunOptions;

interface OrderRow {
  trade_no: string;
  merchant_order_no: string;
  status: string;
  close_reason: string | null;
  at_channel_status: string | null;
  create_requests: number | null;
}

async function readOrders(databaseUrl: string, appId: string): Promise<OrderRow[]> {
  const pg = new PgClient({ connectionString: databaseUrl });
  await pg.connect();
  try {
    return (
      await pg.query<OrderRow>(
        `SELECT o.trade_no, o.merchant_order_no, o.status, o.close_reason,
                s.status AS at_channel_status, s.create_requests
           FROM orders o LEFT JOIN sandbox_orders s ON s.trade_no = o.trade_no
          WHERE o.app_id = $1 AND o.pay_method = 'barcode'`,
        [appId],
      )
    ).rows;
  } finally {
    await pg.end();
  }
}

const PAID = ['paid', 'partially_refunded', 'refunded'];

/** What breaks "money the channel keeps ⇔ order paid, asked once, announced as it ended". */
function violations(journeys: BarcodeJourney[], rows: OrderRow[], receiver: WebhookReceiver): string[] {
  const found: string[] = [];
  const byNo = new Map(rows.map((r) => [r.merchant_order_no, r]));
  for (const j of journeys) {
    const row = byNo.get(j.merchantOrderNo);
    if (!row) {
      // A create that never reached the workflow leaves nothing (and was never at the channel).
      if (j.created?.status === 200) found.push(`${j.merchantOrderNo}: answered 200 but has no order`);
      continue;
    }
    const paid = PAID.includes(row.status);
    const kept = row.at_channel_status === 'paid';
    if (paid !== kept) {
      found.push(
        `${row.trade_no} (${j.buyer}): order ${row.status}${row.close_reason ? ` (${row.close_reason})` : ''}, channel ${row.at_channel_status ?? 'none'}`,
      );
    }
    if (row.status === 'pending') found.push(`${row.trade_no} (${j.buyer}): still pending`);
    if ((row.create_requests ?? 0) > 1)
      found.push(`${row.trade_no} (${j.buyer}): asked of the channel ${row.create_requests} times`);
    const told = (type: string) =>
      new Set(
        receiver.deliveries.filter((d) => d.tradeNo === row.trade_no && d.type === type).map((d) => d.id),
      ).size;
    const expected = { succeeded: paid ? 1 : 0, closed: row.status === 'closed' ? 1 : 0 };
    const got = { succeeded: told('payment.succeeded'), closed: told('payment.closed') };
    if (got.succeeded !== expected.succeeded || got.closed !== expected.closed) {
      found.push(`${row.trade_no} (${j.buyer}, ${row.status}): announced ${JSON.stringify(got)}`);
    }
  }
  return found;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One till: a barcode order after another, each sent until decided, until `done`. */
async function till(
  o: BarcodeRunOptions,
  journeys: BarcodeJourney[],
  stats: ShopperStats,
  done: () => boolean,
) {
  const lastChance = Date.now() + 3 * o.duration * 1_000;
  while (!done() && Date.now() < lastChance) {
    // The first orders meet every kind of buyer once, so a short run covers every outcome by
    // construction; the rest are drawn by weight.
    const buyer = journeys.length < BUYERS.length ? BUYERS[journeys.length]![0] : pick(o.random, BUYERS);
    const journey: BarcodeJourney = { merchantOrderNo: `chaos-bar-${randomUUID()}`, buyer };
    journeys.push(journey);
    journey.created = await decided(
      o.stack.baseUrl,
      o.stack.app,
      'POST',
      '/api/v1/pay/unified-order',
      {
        merchant_order_no: journey.merchantOrderNo,
        pay_method: 'barcode',
        auth_code: sandboxAuthCode(buyer),
        amount: 100 + Math.floor(o.random() * 900),
        subject: 'Chaos counter sale',
        notify_url: o.receiver.url,
        device_id: 'chaos-till',
      },
      stats,
      Date.now() + 120_000,
      // A 502 channel_timeout decides a barcode create: its reverse is under way.
      (status, code) => status === 502 && code === 'channel_timeout',
    );
    await sleep(50);
  }
}

export async function runBarcode(o: BarcodeRunOptions): Promise<boolean> {
  const { stack, receiver } = o;
  const stats: ShopperStats = { requests: 0, retries: 0 };
  const journeys: BarcodeJourney[] = [];
  const kills: HoldKill[] = [];
  const started = Date.now();
  const until = started + o.duration * 1_000;
  const bar = progressBar('chaos', o.duration, 's');
  const ticker = setInterval(() => {
    bar.update((Date.now() - started) / 1_000, `${journeys.length} barcode orders, ${kills.length} kills`);
  }, 1_000);
  let monkeyDone = false;
  const monkey = killAtHolds({
    dir: o.holdsDir,
    spots: BARCODE_HOLDS,
    times: o.kills,
    until: started + 3 * o.duration * 1_000,
    baseUrl: stack.baseUrl,
    supervisorPid: stack.supervisorPid!,
    onKill: (k) => kills.push(k),
  });
  const done = () => Date.now() >= until && monkeyDone && journeys.length >= o.minOrders;
  await Promise.all([
    monkey.finally(() => (monkeyDone = true)),
    ...Array.from({ length: o.shoppers }, () => till(o, journeys, stats, done)),
  ]);
  clearInterval(ticker);
  bar.stop();

  say(`settling: waiting up to ${o.settle} s for every barcode order to end and be announced`);
  const settleUntil = Date.now() + o.settle * 1_000;
  let rows = await readOrders(stack.databaseUrl!, stack.app.app_id);
  let found = violations(journeys, rows, receiver);
  while (found.length > 0 && Date.now() < settleUntil) {
    await sleep(2_000);
    rows = await readOrders(stack.databaseUrl!, stack.app.app_id);
    found = violations(journeys, rows, receiver);
  }

  const status = (s: string) => rows.filter((r) => r.status === s).length;
  const orders = {
    created: journeys.length,
    answers: listCounts(byAnswer(journeys.map((j) => j.created))),
    paid: status('paid'),
    reversed: rows.filter((r) => r.close_reason === 'reversed').length,
    refused: rows.filter((r) => r.close_reason === 'refused').length,
    channelKeeps: rows.filter((r) => r.at_channel_status === 'paid').length,
  };
  const { table, reached, survived, allKilled } = killReport(BARCODE_HOLDS, kills, o.kills);
  console.log(
    [
      ...table,
      '',
      `barcode orders: ${orders.created} (answered ${orders.answers}); ${orders.paid} paid, ` +
        `${orders.reversed} reversed, ${orders.refused} refused; the channel keeps ${orders.channelKeeps}; ` +
        `${stats.requests} requests, ${stats.retries} sent again after no answer`,
      `chaos: ${reached.length} kills of ${BARCODE_HOLDS.length * o.kills} planned, ${survived.length} survived; ` +
        `invariants checked on ${rows.length} orders: violations: ${found.length}`,
      ...found.slice(0, 30).map((v) => `  violation: ${v}`),
    ].join('\n'),
  );
  writeReport(o.outDir, 'chaos-barcode', {
    scenario: 'barcode',
    seed: o.seed,
    duration: o.duration,
    shoppers: o.shoppers,
    kills,
    survived: survived.length,
    orders,
    requests: stats,
    violations: found,
  });
  return found.length === 0 && allKilled;
}
