/**
 * Kills the worker at chosen points of an order's money, not at random moments: the runner arms
 * a point (a file in the holds directory, src/worker/activity-holds.ts), the first activity that
 * reaches it hangs there, and the runner kills the worker while it does. Temporal then runs the
 * activity again on the restarted worker (or, for one tried once such as a transfer's create,
 * tells the workflow it had no answer), and the order must go on as if nothing had happened.
 */
import fs from 'node:fs';
import path from 'node:path';
import { armedFile, HELD_PREFIX, type HoldPoint } from '../../src/worker/activity-holds';
import type { Stack } from '../../bench/lib/stack';
import type { WebhookReceiver } from '../../bench/lib/receiver';
import { say } from '../../bench/lib/cli';
import { killAndWait } from './monkey';

export interface HoldSpot {
  activity: string;
  point: HoldPoint;
  /** What is true of the order when the worker dies there. */
  means: string;
}

export const SHARING_HOLDS: HoldSpot[] = [
  { activity: 'shareProfit', point: 'after', means: 'the share is made at the channel, the order not told' },
  { activity: 'recordRefundCreated', point: 'before', means: 'a refund is reserved, its row not written' },
  {
    activity: 'requestChannelRefund',
    point: 'after',
    means: 'the refund is made at the channel, the order not told',
  },
  {
    activity: 'returnProfitShare',
    point: 'after',
    means: 'a part of the share came back, the order not told',
  },
];

/** Where a transfer is under way: the channel asked once, whatever the worker does meanwhile. */
export const TRANSFER_HOLDS: HoldSpot[] = [
  {
    activity: 'createChannelTransfer',
    point: 'before',
    means: 'the transfer is recorded, the channel not asked yet',
  },
  {
    activity: 'createChannelTransfer',
    point: 'after',
    means: 'the transfer is made at the channel, the workflow not told',
  },
  {
    activity: 'recordTransferStep',
    point: 'before',
    means: "the channel's word on a transfer is known, its row not written",
  },
];

/** Where a barcode payment is under way: the buyer maybe charged, the order not told. */
export const BARCODE_HOLDS: HoldSpot[] = [
  {
    activity: 'payBarcodeAtChannel',
    point: 'after',
    means: 'the buyer is charged at the channel, the order not told',
  },
  {
    activity: 'reverseBarcodePayment',
    point: 'before',
    means: 'the order decided to reverse, the channel not asked yet',
  },
  {
    activity: 'reverseBarcodePayment',
    point: 'after',
    means: 'the channel reversed (and gave back), the order not told',
  },
];

/** What a scenario that kills the worker at its holds is run with (chaos/main.ts). */
export interface HoldRunOptions {
  seed: number;
  duration: number;
  kills: number;
  shoppers: number;
  /** Go on past --duration (up to 3 ×) until this many of the scenario's items were made. */
  minOrders: number;
  settle: number;
  outDir: string;
  random: () => number;
  stack: Stack;
  receiver: WebhookReceiver;
  holdsDir: string;
}

export interface HoldKill {
  activity: string;
  point: HoldPoint;
  /** The workflow whose activity was held (empty when the point was never reached). */
  workflowId: string;
  at?: number;
  pid?: number;
  recoveredMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The workflow id a held attempt wrote into its held file: waited for up to 30 s (the attempt
 * renames the armed file, then writes; a kill before the write would lose which workflow it was).
 */
export async function workflowIdIn(file: string): Promise<string> {
  const until = Date.now() + 30_000;
  for (;;) {
    const id = fs.readFileSync(file, 'utf8');
    if (id !== '' || Date.now() >= until) return id;
    await sleep(50);
  }
}

/** The spots held now, by their held files. */
function heldNow(dir: string, spots: HoldSpot[]): { spot: HoldSpot; file: string }[] {
  const files = fs.readdirSync(dir);
  return spots.flatMap((spot) => {
    const prefix = `${HELD_PREFIX}${spot.activity}.${spot.point}.`;
    return files.filter((f) => f.startsWith(prefix)).map((f) => ({ spot, file: path.join(dir, f) }));
  });
}

/** Whether the process a held file names (its last part) is still alive. */
function holderAlive(file: string): boolean {
  const pid = Number(path.basename(file).split('.').pop());
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A held file whose attempt died before it wrote its workflow id: another spot's kill landed
 * between its rename and its write. Nothing is held there; the spot is armed again.
 */
function diedBeforeWriting(file: string): boolean {
  return fs.readFileSync(file, 'utf8') === '' && !holderAlive(file);
}

/**
 * Arms every spot at once, `times` times each: whenever activities are held, kills the worker
 * (one kill for all held at that moment) and arms those spots again, until each was held
 * `times` times or `until` passes. A spot still armed then is disarmed and reported unreached.
 */
export async function killAtHolds(o: {
  dir: string;
  spots: HoldSpot[];
  times: number;
  until: number;
  baseUrl: string;
  supervisorPid: number;
  onKill: (k: HoldKill) => void;
}): Promise<HoldKill[]> {
  fs.mkdirSync(o.dir, { recursive: true });
  const kills: HoldKill[] = [];
  const left = new Map(o.spots.map((s) => [s, o.times]));
  const armed = (s: HoldSpot) => armedFile(o.dir, s.activity, s.point);
  const record = (k: HoldKill) => {
    kills.push(k);
    o.onKill(k);
  };
  /** One kill for every attempt held now; the spots that have kills left are armed again. */
  const killHeld = async (all: { spot: HoldSpot; file: string }[], rearm: boolean) => {
    // Each held attempt writes its workflow id right after taking its arming, and then waits for
    // ever: its id is waited for before the kill, however slow a loaded machine is to write it.
    const allIds = await Promise.all(all.map(({ file }) => workflowIdIn(file)));
    // One whose process died before it wrote (an earlier kill) holds nothing: armed again.
    const keep = all.map(({ file }, i) => allIds[i] !== '' || holderAlive(file));
    for (const [i, { spot, file }] of all.entries()) {
      if (keep[i]) continue;
      fs.rmSync(file, { force: true });
      if (rearm && left.get(spot)! > 0) fs.writeFileSync(armed(spot), '');
    }
    const held = all.filter((_, i) => keep[i]);
    const ids = allIds.filter((_, i) => keep[i]);
    if (held.length === 0) return;
    const kill = await killAndWait(o.baseUrl, o.supervisorPid, 'worker', 120_000);
    for (const [i, { spot, file }] of held.entries()) {
      record({
        activity: spot.activity,
        point: spot.point,
        workflowId: ids[i]!,
        at: kill.at,
        ...(kill.pid === undefined ? {} : { pid: kill.pid }),
        ...(kill.recoveredMs === undefined ? {} : { recoveredMs: kill.recoveredMs }),
      });
      fs.rmSync(file, { force: true });
      left.set(spot, left.get(spot)! - 1);
      if (rearm && left.get(spot)! > 0) fs.writeFileSync(armed(spot), '');
    }
  };

  for (const spot of o.spots) fs.writeFileSync(armed(spot), '');
  while (Date.now() < o.until && [...left.values()].some((n) => n > 0)) {
    const held = heldNow(o.dir, o.spots).filter(({ spot, file }) => {
      if (!diedBeforeWriting(file)) return true;
      fs.rmSync(file, { force: true });
      if (left.get(spot)! > 0) fs.writeFileSync(armed(spot), '');
      return false;
    });
    if (held.length > 0) await killHeld(held, true);
    else await sleep(50);
  }
  for (const spot of o.spots) fs.rmSync(armed(spot), { force: true });
  // An attempt that took its arming just before the disarming would hang until its timeout.
  const late = heldNow(o.dir, o.spots);
  if (late.length > 0) await killHeld(late, false);
  for (const [spot, n] of left) {
    for (let i = 0; i < n; i++) record({ activity: spot.activity, point: spot.point, workflowId: '' });
  }
  return kills;
}

/**
 * How a scenario's planned kills went: the table of its holds (killed there, and back), the
 * kills that reached their point and those survived, and whether every planned kill was both
 * (said when not).
 */
export function killReport(
  spots: HoldSpot[],
  kills: HoldKill[],
  times: number,
): { table: string[]; reached: HoldKill[]; survived: HoldKill[]; allKilled: boolean } {
  const reached = kills.filter((k) => k.workflowId);
  const survived = reached.filter((k) => k.pid !== undefined && k.recoveredMs !== undefined);
  const table = [
    '| worker killed at | times | back |',
    '| --- | ---: | ---: |',
    ...spots.map((h) => {
      const at = reached.filter((k) => k.activity === h.activity && k.point === h.point);
      const back = at.filter((k) => k.recoveredMs !== undefined).length;
      return `| ${h.activity} (${h.point}): ${h.means} | ${at.length} | ${back} |`;
    }),
  ];
  const allKilled = reached.length === spots.length * times && survived.length === reached.length;
  if (!allKilled) say('not every planned kill happened and was survived (see the table)');
  return { table, reached, survived, allKilled };
}
