/**
 * `npm run chaos`: a whole durapay on this machine under steady load, while its worker, API,
 * Temporal dev server and Postgres are killed with SIGKILL at random moments, several times
 * each; then the invariants of money and of nothing lost are checked. See docs/testing.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { intOption, say } from '../bench/lib/cli';
import { progressBar } from '../bench/lib/progress';
import { WebhookReceiver } from '../bench/lib/receiver';
import { startOwnStack, stopAllStacks, type Stack } from '../bench/lib/stack';
import { gatherEvidence } from './lib/evidence';
import { census, readState, violations, type Census } from './lib/invariants';
import { COMPONENTS, killAndWait, killPlan, type Kill } from './lib/monkey';
import { shop, type OrderJourney, type ShopperStats } from './lib/shopper';
import { BARCODE_HOLDS, SHARING_HOLDS, TRANSFER_HOLDS, type HoldSpot } from './lib/holds';
import { runSharing } from './lib/sharing-run';
import { runTransfers } from './lib/transfers-run';
import { runBarcode } from './lib/barcode-run';
import { writeReport } from './lib/report';

const ROOT = path.join(__dirname, '..');

const SCENARIOS = ['random', 'sharing', 'transfers', 'barcode'] as const;
type Scenario = (typeof SCENARIOS)[number];

/** The points the worker is killed at, for the scenarios that kill it there. */
const HOLDS: Partial<Record<Scenario, HoldSpot[]>> = {
  sharing: SHARING_HOLDS,
  transfers: TRANSFER_HOLDS,
  barcode: BARCODE_HOLDS,
};

interface Options {
  scenario: Scenario;
  duration: number;
  kills: number;
  shoppers: number;
  minOrders: number;
  seed: number;
  settle: number;
  outDir: string;
  keep: boolean;
}

function parseOptions(argv: string[]): Options {
  const program = new Command()
    .name('npm run chaos --')
    .description(
      'Kill the parts of a running durapay under load, then check that no money moved twice and nothing was lost.',
    )
    .option(
      '--scenario <name>',
      "`random`: every part killed at random moments under load; `sharing`: the worker killed between a profit share and a refund, and between a refund's reservation and its row; `transfers`: the worker killed before and after a transfer's one create at the channel, and before a transfer's state is recorded; `barcode`: the worker killed after a barcode payment was taken at the channel and before and after its reverse",
      'random',
    )
    .option(
      '--duration <s>',
      'seconds of load, during which the kills happen (sharing, transfers: longer while a point is not reached, up to 3 ×)',
      intOption('--duration', 10),
      300,
    )
    .option(
      '--kills <n>',
      'how many times each of worker, API, Temporal and Postgres is killed (default 4); sharing, transfers: the worker at each point (default and at most 2)',
      intOption('--kills', 0),
    )
    .option('--shoppers <n>', 'concurrent shoppers', intOption('--shoppers', 1), 4)
    .option(
      '--min-orders <n>',
      'go on past --duration (up to 3 ×) until this many orders were answered (sharing: paid; transfers: transfers made), so that a slow machine still checks enough of them',
      intOption('--min-orders', 0),
      0,
    )
    .option('--seed <n>', 'seed of the kill plan and the shoppers', intOption('--seed', 0))
    .option(
      '--settle <s>',
      'seconds allowed after the load for every order (transfers: every transfer) to reach its final state',
      intOption('--settle', 10),
      180,
    )
    .option('--out-dir <dir>', 'where the JSON report is written', path.join(ROOT, 'chaos', 'results'))
    .option('--keep', "keep the stack's scratch directory (its logs)", false)
    .parse(argv);
  const o = program.opts<Omit<Options, 'seed' | 'kills'> & { seed?: number; kills?: number }>();
  if (!(SCENARIOS as readonly string[]).includes(o.scenario))
    program.error(`--scenario must be one of ${SCENARIOS.join(', ')}`);
  const holds = HOLDS[o.scenario];
  const kills = o.kills ?? (holds ? 2 : 4);
  // `durapay start` stops the whole stack when a part stops more than 8 times within 10 minutes.
  if (holds && kills * holds.length > 8)
    program.error(
      `--kills ${kills} would kill the worker ${kills * holds.length} times: durapay start stops a part restarted more than 8 times within 10 minutes (at most ${Math.floor(8 / holds.length)})`,
    );
  return { ...o, kills, seed: o.seed ?? Math.floor(Math.random() * 2 ** 31) };
}

/** A small seeded generator (mulberry32): the same seed plans the same kills and orders. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The supervisor's own account of its restarts, from its lines in the stack's log. */
function restartsLogged(logFile: string | undefined): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!logFile || !fs.existsSync(logFile)) return counts;
  for (const m of fs.readFileSync(logFile, 'utf8').matchAll(/The (.+?) is running again/g)) {
    counts[m[1]!] = (counts[m[1]!] ?? 0) + 1;
  }
  return counts;
}

/** Every part killed at planned random moments under the shoppers' load. */
async function runRandom(
  o: Options,
  random: () => number,
  stack: Stack,
  receiver: WebhookReceiver,
): Promise<boolean> {
  const journeys: OrderJourney[] = [];
  const stats: ShopperStats = { requests: 0, retries: 0 };
  const started = Date.now();
  const until = started + o.duration * 1_000;
  const bar = progressBar('chaos', o.duration, 's');
  const ticker = setInterval(() => {
    const answered = journeys.filter((j) => j.created?.status === 200).length;
    bar.update(
      (Date.now() - started) / 1_000,
      `${answered} orders, ${kills.length} kills, ${stats.retries} resends`,
    );
  }, 1_000);
  const kills: Kill[] = [];
  const monkey = (async () => {
    // Kills start once the load runs and end before it does, so recovery is under load too.
    const plan = killPlan(o.kills, 5_000, o.duration * 1_000 - 10_000, random);
    for (const step of plan) {
      const wait = started + step.atMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const kill = await killAndWait(stack.baseUrl, stack.supervisorPid!, step.component, 120_000);
      kills.push(kill);
      say(
        `  killed ${kill.component}${kill.pid ? ` (pid ${kill.pid})` : ' (not found)'}: ` +
          (kill.recoveredMs === undefined
            ? 'not back within 120 s'
            : `back in ${(kill.recoveredMs / 1000).toFixed(1)} s`),
      );
    }
  })();
  const shoppers = Array.from({ length: o.shoppers }, () =>
    shop({
      baseUrl: stack.baseUrl,
      app: stack.app,
      notifyUrl: receiver.url,
      until,
      requestDeadlineMs: 120_000,
      random,
      journeys,
      stats,
      goOn: () =>
        Date.now() < started + 3 * o.duration * 1_000 &&
        journeys.filter((j) => j.created?.status === 200).length < o.minOrders,
    }),
  );
  await Promise.all([monkey, ...shoppers]);
  clearInterval(ticker);
  bar.stop();

  // Every order and refund reaches its final state, and its announcement arrives.
  say(`settling: waiting up to ${o.settle} s for every order and refund to be final`);
  const settleUntil = Date.now() + o.settle * 1_000;
  let state = await readState(stack.databaseUrl!, stack.app.app_id);
  let found = violations(journeys, state, receiver.deliveries);
  while (found.length > 0 && Date.now() < settleUntil) {
    await new Promise((r) => setTimeout(r, 2_000));
    state = await readState(stack.databaseUrl!, stack.app.app_id);
    found = violations(journeys, state, receiver.deliveries);
  }
  const counts: Census = census(state);
  // Gathered while the stack still runs, so that a failure explains itself from its report.
  const evidence = await gatherEvidence({
    violations: found,
    journeys,
    databaseUrl: stack.databaseUrl!,
    temporalAddress: stack.temporalAddress,
    appId: stack.app.app_id,
  }).catch((err: unknown) => [{ error: `evidence not gathered: ${String(err)}` }]);
  const restarts = restartsLogged(stack.logFile);
  const survived = kills.filter((k) => k.pid !== undefined && k.recoveredMs !== undefined).length;
  const answered = journeys.filter((j) => j.created?.status === 200).length;
  // Creates decided otherwise (a 4xx) or not at all within the resend deadline, by code.
  const otherCreates: Record<string, number> = {};
  for (const j of journeys) {
    if (j.created?.status === 200) continue;
    const key = j.created ? `${j.created.status} ${j.created.code}` : 'undecided';
    otherCreates[key] = (otherCreates[key] ?? 0) + 1;
  }

  const rows = COMPONENTS.map((c) => {
    const ks = kills.filter((k) => k.component === c);
    const back = ks.map((k) => k.recoveredMs).filter((ms): ms is number => ms !== undefined);
    return `| ${c} | ${ks.length} | ${back.length} | ${back.length ? (Math.max(...back) / 1000).toFixed(1) : '–'} |`;
  });
  console.log(
    [
      '| killed | times | back | slowest return, s |',
      '| --- | ---: | ---: | ---: |',
      ...rows,
      '',
      `supervisor restarts: ${
        Object.entries(restarts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none'
      }`,
      `orders: ${journeys.length} created (${answered} answered 200${Object.entries(otherCreates)
        .map(([k, n]) => `, ${n} ${k}`)
        .join('')}), ${counts.paid} paid, ${counts.closed} closed, ` +
        `${counts.refunds} refunds; ${stats.requests} requests, ${stats.retries} sent again after no answer`,
      `channel orders left behind by creates that timed out (never paid): ${state.orphans.length}`,
      `chaos: ${kills.length} kills, ${survived} survived; invariants checked on ${answered} orders: violations: ${found.length}`,
      ...evidence.map((e) => `  evidence: ${JSON.stringify(e).slice(0, 1_500)}…`),
      ...found.slice(0, 30).map((v) => `  violation: ${v}`),
    ].join('\n'),
  );

  writeReport(o.outDir, 'chaos', {
    seed: o.seed,
    duration: o.duration,
    shoppers: o.shoppers,
    kills,
    survived,
    restarts,
    orders: {
      created: journeys.length,
      answered,
      otherCreates,
      ...counts,
      orphans: state.orphans.length,
    },
    requests: stats,
    violations: found,
    evidence,
  });
  const allKilled = kills.length === o.kills * COMPONENTS.length && survived === kills.length;
  if (!allKilled) say('not every kill was survived (see the table)');
  return found.length === 0 && allKilled;
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv);
  const random = seeded(o.seed);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-chaos-'));
  process.once('SIGINT', () => {
    void stopAllStacks().finally(() => process.exit(130));
  });
  let stack: Stack | undefined;
  let receiver: WebhookReceiver | undefined;
  try {
    const holds = HOLDS[o.scenario];
    say(
      `chaos: seed ${o.seed}, ${o.duration} s of load by ${o.shoppers} shoppers, ` +
        (holds
          ? `the worker killed ${o.kills} times at each of ${holds.map((h) => `${h.activity} (${h.point})`).join(', ')}`
          : `each of ${COMPONENTS.join(', ')} killed ${o.kills} times`),
    );
    const holdsDir = path.join(workDir, 'holds');
    stack = await startOwnStack({
      workDir,
      // Always its own embedded Postgres, whatever DATABASE_URL says: it is killed, and a
      // server of the machine's must never be.
      databaseUrl: undefined,
      purpose: 'chaos',
      // 1/100 of real time: a 10-minute expiry is 6 s, so orders end within the run.
      env: {
        DURAPAY_TIME_SCALE: '0.01',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        ...(holds ? { DURAPAY_CHAOS_HOLDS_DIR: holdsDir } : {}),
        // A barcode payment followed for 3 s at this scale, so that the buyer who confirms a
        // second later pays within it and the one who never does is reversed within the run.
        ...(o.scenario === 'barcode' ? { BARCODE_WAIT: '300s' } : {}),
      },
      // Merchants with profit-sharing receivers are made through the API.
      appScopes: o.scenario === 'sharing' ? 'payments,merchants' : 'payments',
      say,
    });
    receiver = await new WebhookReceiver(stack.app.webhook_secret).start();

    const ok =
      o.scenario === 'sharing'
        ? await runSharing({ ...o, random, stack, receiver, holdsDir })
        : o.scenario === 'transfers'
          ? await runTransfers({ ...o, random, stack, receiver, holdsDir })
          : o.scenario === 'barcode'
            ? await runBarcode({ ...o, random, stack, receiver, holdsDir })
            : await runRandom(o, random, stack, receiver);
    process.exitCode = ok ? 0 : 1;
  } finally {
    await receiver?.stop().catch(() => undefined);
    await stack?.stop().catch((err: unknown) => say(`could not stop the stack: ${String(err)}`));
    if (!o.keep) fs.rmSync(workDir, { recursive: true, force: true });
    else say(`scratch directory kept: ${workDir}`);
  }
}

main().catch((err: unknown) => {
  say(`chaos failed: ${err instanceof Error ? err.message : String(err)}`);
  void stopAllStacks().finally(() => process.exit(2));
});
