/**
 * `npm run chaos -- --scenario sharing`: shoppers whose orders are shared and refunded at once,
 * while the worker is killed at the points of ./holds.ts; then every order settles, its last
 * fen is refunded, and the money is counted at the channel.
 */
import { say } from '../../bench/lib/cli';
import { progressBar } from '../../bench/lib/progress';
import { killAtHolds, killReport, SHARING_HOLDS, type HoldKill, type HoldRunOptions } from './holds';
import { writeReport } from './report';
import { gatherEvidence } from './evidence';
import {
  lastFen,
  leftReserved,
  makeMerchants,
  readSharingState,
  sharingViolations,
  shopWithSharing,
  type SharingJourney,
} from './sharing';
import type { ShopperStats } from './shopper';

export type SharingRunOptions = HoldRunOptions;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads the state until `check` finds nothing wrong, or the deadline passes; the last findings. */
async function settle(
  o: SharingRunOptions,
  deadline: number,
  check: (rows: Awaited<ReturnType<typeof readSharingState>>) => string[],
) {
  let rows = await readSharingState(o.stack.databaseUrl!, o.stack.app.app_id);
  let found = check(rows);
  while (found.length > 0 && Date.now() < deadline) {
    await sleep(2_000);
    rows = await readSharingState(o.stack.databaseUrl!, o.stack.app.app_id);
    found = check(rows);
  }
  return { rows, found };
}

export async function runSharing(o: SharingRunOptions): Promise<boolean> {
  const { stack, receiver } = o;
  const stats: ShopperStats = { requests: 0, retries: 0 };
  const merchants = await makeMerchants(stack.baseUrl, stack.app, stats);
  const journeys: SharingJourney[] = [];
  const kills: HoldKill[] = [];
  const started = Date.now();
  const until = started + o.duration * 1_000;
  const bar = progressBar('chaos', o.duration, 's');
  const ticker = setInterval(() => {
    const paid = journeys.filter((j) => j.paid).length;
    bar.update((Date.now() - started) / 1_000, `${paid} orders paid, ${kills.length} kills`);
  }, 1_000);
  // The run lasts --duration, and longer while a planned kill point has not been reached or fewer
  // than --min-orders orders were paid (a loaded machine makes fewer orders, and a point may need
  // a few of them): up to 3 × --duration.
  const lastChance = started + 3 * o.duration * 1_000;
  let monkeyDone = false;
  const monkey = killAtHolds({
    dir: o.holdsDir,
    spots: SHARING_HOLDS,
    times: o.kills,
    until: lastChance,
    baseUrl: stack.baseUrl,
    supervisorPid: stack.supervisorPid!,
    onKill: (k) => kills.push(k),
  });
  const shoppers = Array.from({ length: o.shoppers }, () =>
    shopWithSharing({
      baseUrl: stack.baseUrl,
      app: stack.app,
      notifyUrl: receiver.url,
      merchants,
      until: lastChance,
      done: () => Date.now() >= until && monkeyDone && journeys.filter((j) => j.paid).length >= o.minOrders,
      requestDeadlineMs: 120_000,
      random: o.random,
      journeys,
      stats,
    }),
  );
  await Promise.all([monkey.finally(() => (monkeyDone = true)), ...shoppers]);
  clearInterval(ticker);
  bar.stop();
  for (const k of kills) {
    const where = `${k.activity} (${k.point})`;
    say(
      !k.workflowId
        ? `  ${where}: never reached`
        : `  ${where} in ${k.workflowId}: worker killed, ` +
            (k.recoveredMs === undefined
              ? 'not back within 120 s'
              : `back in ${(k.recoveredMs / 1000).toFixed(1)} s`),
    );
  }

  say(`settling: waiting up to ${o.settle} s for every order, share and refund to be final`);
  const violationsNow = (rows: Awaited<ReturnType<typeof readSharingState>>) =>
    sharingViolations(journeys, rows, receiver.deliveries);
  let state = await settle(o, Date.now() + o.settle * 1_000, violationsNow);
  let found = state.found;
  if (found.length === 0) {
    // Nothing may stay reserved: what is left of each order can be refunded, and no fen more.
    say('refunding the last fen of every paid order');
    found = await lastFen({ baseUrl: stack.baseUrl, app: stack.app, stats }, journeys, state.rows);
    if (found.length === 0) {
      state = await settle(o, Date.now() + o.settle * 1_000, (rows) => [
        ...violationsNow(rows),
        ...leftReserved(journeys, rows),
      ]);
      found = state.found;
    }
  }

  // Gathered while the stack still runs, so that a failure explains itself from its report.
  const evidence = await gatherEvidence({
    violations: found,
    journeys,
    databaseUrl: stack.databaseUrl!,
    temporalAddress: stack.temporalAddress,
    appId: stack.app.app_id,
  }).catch((err: unknown) => [{ error: `evidence not gathered: ${String(err)}` }]);
  const n = (x: string) => Number(x);
  const total = (f: (r: (typeof state.rows)[number]) => number) => state.rows.reduce((s, r) => s + f(r), 0);
  const refundAnswers: Record<string, number> = {};
  for (const r of journeys.flatMap((j) => j.refunds)) {
    const key = r.answer ? `${r.answer.status} ${r.answer.code}` : 'undecided';
    refundAnswers[key] = (refundAnswers[key] ?? 0) + 1;
  }
  const { table, reached, survived, allKilled } = killReport(SHARING_HOLDS, kills, o.kills);
  const paid = journeys.filter((j) => j.paid).length;
  const money = {
    paid_in: total((r) => (r.status === 'pending' || r.status === 'closed' ? 0 : n(r.amount))),
    refunded: total((r) => n(r.channel_refunded)),
    shared: total((r) => n(r.channel_shared)),
    returned: total((r) => n(r.channel_returned)),
  };
  console.log(
    [
      ...table,
      '',
      `orders: ${journeys.length} created, ${paid} paid; refunds: ${Object.entries(refundAnswers)
        .map(([k, c]) => `${c} ${k}`)
        .join(', ')}; ${stats.requests} requests, ${stats.retries} sent again after no answer`,
      `at the channel: ${money.paid_in} paid in; ${money.refunded} refunded, ${money.shared} shared, ${money.returned} returned`,
      `chaos: ${reached.length} kills of ${SHARING_HOLDS.length * o.kills} planned, ${survived.length} survived; ` +
        `invariants checked on ${paid} orders: violations: ${found.length}`,
      ...evidence.map((e) => `  evidence: ${JSON.stringify(e).slice(0, 3_000)}…`),
      ...found.slice(0, 30).map((v) => `  violation: ${v}`),
    ].join('\n'),
  );
  writeReport(o.outDir, 'chaos-sharing', {
    scenario: 'sharing',
    seed: o.seed,
    duration: o.duration,
    shoppers: o.shoppers,
    kills,
    survived: survived.length,
    orders: { created: journeys.length, paid },
    refunds: refundAnswers,
    money,
    requests: stats,
    violations: found,
    evidence,
  });
  return found.length === 0 && allKilled;
}
