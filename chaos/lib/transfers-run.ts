/**
 * `npm run chaos -- --scenario transfers`: shoppers pay people out while the worker is killed at
 * the points of ./holds.ts where a transfer is under way; then every transfer ends, and what the
 * channel paid and was asked is counted at the channel.
 */
import { say } from '../../bench/lib/cli';
import { progressBar } from '../../bench/lib/progress';
import { killAtHolds, killReport, TRANSFER_HOLDS, type HoldKill, type HoldRunOptions } from './holds';
import { byAnswer, listCounts as list, writeReport } from './report';
import {
  gatherTransferEvidence,
  paidOut,
  readTransferState,
  SENDINGS,
  shopTransfers,
  TRANSFER_KINDS,
  transferViolations,
  type TransferJourney,
  type TransferState,
} from './transfers';
import type { ShopperStats } from './shopper';

export type TransfersRunOptions = HoldRunOptions;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runTransfers(o: TransfersRunOptions): Promise<boolean> {
  const { stack, receiver } = o;
  const stats: ShopperStats = { requests: 0, retries: 0 };
  const journeys: TransferJourney[] = [];
  const kills: HoldKill[] = [];
  const started = Date.now();
  const until = started + o.duration * 1_000;
  const bar = progressBar('chaos', o.duration, 's');
  const ticker = setInterval(() => {
    const made = journeys.filter((j) => j.transferNo).length;
    bar.update((Date.now() - started) / 1_000, `${made} transfers made, ${kills.length} kills`);
  }, 1_000);
  // Longer than --duration while a planned point has not been reached or fewer than --min-orders
  // transfers were made (a worker restarting under load holds the shoppers' requests), up to
  // 3 × --duration.
  const lastChance = started + 3 * o.duration * 1_000;
  let monkeyDone = false;
  const monkey = killAtHolds({
    dir: o.holdsDir,
    spots: TRANSFER_HOLDS,
    times: o.kills,
    until: lastChance,
    baseUrl: stack.baseUrl,
    supervisorPid: stack.supervisorPid!,
    onKill: (k) => kills.push(k),
  });
  const shoppers = Array.from({ length: o.shoppers }, () =>
    shopTransfers({
      baseUrl: stack.baseUrl,
      app: stack.app,
      notifyUrl: receiver.url,
      until: lastChance,
      done: () =>
        Date.now() >= until && monkeyDone && journeys.filter((j) => j.transferNo).length >= o.minOrders,
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

  // Every transfer ends and is announced: the settle waits for that, then the checks count.
  say(`settling: waiting up to ${o.settle} s for every transfer to end and be announced`);
  const settleUntil = Date.now() + o.settle * 1_000;
  let state: TransferState = await readTransferState(stack.databaseUrl!, stack.app.app_id);
  let found = transferViolations(journeys, state, receiver.deliveries);
  while (found.length > 0 && Date.now() < settleUntil) {
    await sleep(2_000);
    state = await readTransferState(stack.databaseUrl!, stack.app.app_id);
    found = transferViolations(journeys, state, receiver.deliveries);
  }

  // Gathered while the stack still runs, so that a failure explains itself from its report.
  const evidence = await gatherTransferEvidence({
    violations: found,
    journeys,
    databaseUrl: stack.databaseUrl!,
    temporalAddress: stack.temporalAddress,
  }).catch((err: unknown) => [{ error: `evidence not gathered: ${String(err)}` }]);

  const count = <T extends string>(keys: readonly T[], of: (j: TransferJourney) => T) =>
    Object.fromEntries(keys.map((k) => [k, journeys.filter((j) => of(j) === k).length])) as Record<T, number>;
  const status = (s: string) => state.transfers.filter((t) => t.status === s).length;
  const transfers = {
    requested: journeys.length,
    made: journeys.filter((j) => j.transferNo).length,
    kinds: count(TRANSFER_KINDS, (j) => j.kind),
    sendings: count(SENDINGS, (j) => j.sending),
    creates: byAnswer(journeys.flatMap((j) => j.creates)),
    success: status('success'),
    failed: status('failed'),
    cancelled: status('cancelled'),
    open: state.transfers.filter((t) => !['success', 'failed', 'cancelled'].includes(t.status)).length,
    // Failed without reaching the channel: a create that never left the dead worker.
    neverAtChannel: state.transfers.filter((t) => t.at_channel_status === null).length,
    confirmedByPayee: journeys.filter((j) => j.confirmed?.status === 200).length,
    cancels: byAnswer(journeys.flatMap((j) => j.cancels)),
  };
  const channel = {
    transfers: state.channel.length,
    createRequests: state.channel.reduce((s, c) => s + c.create_requests, 0),
    mostRequestsOfOne: Math.max(0, ...state.channel.map((c) => c.create_requests)),
    paidOut: paidOut(state.channel),
  };
  const durapayPaidOut = paidOut(state.transfers);
  const { table, reached, survived, allKilled } = killReport(TRANSFER_HOLDS, kills, o.kills);
  console.log(
    [
      ...table,
      '',
      `transfers: ${transfers.requested} requested (${list(transfers.kinds)}; sent ${list(transfers.sendings)}), ` +
        `creates answered ${list(transfers.creates)}; ended ${transfers.success} success, ${transfers.failed} failed ` +
        `(${transfers.neverAtChannel} never at the channel), ${transfers.cancelled} cancelled, ${transfers.open} open; ` +
        `${transfers.confirmedByPayee} confirmed by their payee; cancels answered ${list(transfers.cancels)}; ` +
        `${stats.requests} requests, ${stats.retries} sent again after no answer`,
      `at the channel: ${channel.transfers} transfers, ${channel.createRequests} create requests ` +
        `(at most ${channel.mostRequestsOfOne} for one transfer_no), ${channel.paidOut} paid out; ` +
        `durapay's successful transfers: ${durapayPaidOut}`,
      `chaos: ${reached.length} kills of ${TRANSFER_HOLDS.length * o.kills} planned, ${survived.length} survived; ` +
        `invariants checked on ${state.transfers.length} transfers: violations: ${found.length}`,
      ...evidence.map((e) => `  evidence: ${JSON.stringify(e).slice(0, 3_000)}…`),
      ...found.slice(0, 30).map((v) => `  violation: ${v}`),
    ].join('\n'),
  );
  writeReport(o.outDir, 'chaos-transfers', {
    scenario: 'transfers',
    seed: o.seed,
    duration: o.duration,
    shoppers: o.shoppers,
    kills,
    survived: survived.length,
    transfers,
    channel,
    durapayPaidOut,
    requests: stats,
    violations: found,
    evidence,
  });
  return found.length === 0 && allKilled;
}
