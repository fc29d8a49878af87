import { condition, setHandler } from '@temporalio/workflow';
import { benchFloorUpdate } from './messages';

/**
 * The benchmark's floor (`npm run bench`): started by update-with-start exactly as an order is,
 * but its update answers at once and the workflow ends. No activity, no timer, no database:
 * what is left is the cost of Temporal itself, the upper bound any create on the same server
 * and worker can reach.
 */
export async function benchFloorWorkflow(): Promise<void> {
  let answered = false;
  setHandler(benchFloorUpdate, () => {
    answered = true;
    return { ok: true as const };
  });
  // Bounded, so that a start without its update (never done by the bench) cannot linger.
  await condition(() => answered, '1 minute');
}
