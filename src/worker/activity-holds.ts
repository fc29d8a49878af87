/**
 * Failure injection for `npm run chaos` (refused in production by the configuration): holds an
 * activity at the point where a crash is the most awkward, so that the chaos runner can kill the
 * worker exactly there — before the activity runs (a refund reserved by its order, its row not
 * written yet), or after it ran and before its result is reported (a share or a refund made at
 * the channel that the order does not know of yet).
 *
 * The runner arms a point by creating the file `armed.<activityType>.<before|after>` in the holds
 * directory. The first attempt to reach that point renames the file to
 * `held.<activityType>.<point>.<pid>` (a rename is atomic: one attempt takes each arming), writes
 * its workflow id into it, and never returns: the runner sees the file and kills the worker.
 * Every other attempt passes by after one `rename` that fails, so an armed worker costs one
 * system call per activity and an unarmed one nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export type HoldPoint = 'before' | 'after';

/** The file that arms `point` of `activityType` (written by the chaos runner). */
export function armedFile(dir: string, activityType: string, point: HoldPoint): string {
  return path.join(dir, `armed.${activityType}.${point}`);
}

/** The held files' names start with this; what follows is `<activityType>.<point>.<pid>`. */
export const HELD_PREFIX = 'held.';

/** Takes the arming of this point, if there is one; true when this attempt is to be held. */
function takeArming(dir: string, activityType: string, point: HoldPoint, workflowId: string): boolean {
  const held = path.join(dir, `${HELD_PREFIX}${activityType}.${point}.${process.pid}`);
  try {
    fs.renameSync(armedFile(dir, activityType, point), held);
  } catch {
    return false; // not armed, or another attempt took it
  }
  fs.writeFileSync(held, workflowId);
  return true;
}

/** Until the process is killed (the chaos runner's part); the activity's timeout otherwise. */
const forever = () => new Promise<never>(() => undefined);

export function activityHolds(dir: string): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute: async (input, next) => {
        const type = ctx.info.activityType;
        const workflowId = ctx.info.workflowExecution?.workflowId ?? '';
        if (takeArming(dir, type, 'before', workflowId)) return forever();
        const result = await next(input);
        if (takeArming(dir, type, 'after', workflowId)) return forever();
        return result;
      },
    },
  });
}
