import {
  ScheduleAlreadyRunning,
  type Client,
  type ScheduleOptions,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';

/** A Schedule as a module declares it: its fixed id, when it runs, what it starts, its policies. */
export type ScheduleDeclaration<W extends Workflow> = Pick<
  ScheduleOptions<ScheduleOptionsStartWorkflowAction<W>>,
  'scheduleId' | 'spec' | 'action' | 'policies'
>;

/**
 * Makes sure a Schedule exists as declared; every worker calls it at start. The Schedule lives
 * in Temporal, so it survives restarts; its id is fixed, so there is never a second one: the
 * first start creates it, later ones update its spec, action and policies (a changed setting
 * reaches it) and keep its state, so a Schedule an operator paused stays paused, with its note.
 * Answers which it did.
 */
export async function createOrUpdateSchedule<W extends Workflow>(
  client: Client,
  schedule: ScheduleDeclaration<W>,
): Promise<'created' | 'updated'> {
  const { scheduleId, spec, action, policies } = schedule;
  try {
    await client.schedule.create<W>({ scheduleId, spec, action, policies });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(scheduleId).update<W>((previous) => ({
    spec,
    action,
    policies,
    state: { paused: previous.state.paused, note: previous.state.note },
  }));
  return 'updated';
}
