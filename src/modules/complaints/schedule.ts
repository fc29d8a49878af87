import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { createOrUpdateSchedule } from '../../platform/temporal-schedules';
import { complaintSweepScheduleId, type ComplaintSweepInput } from './messages';
import { SWEEP_DAYS, SWEEP_EVERY_MINUTES } from './rules';
import type { complaintSweepWorkflow } from './workflow';

/**
 * Makes sure the complaints' safety net runs (SPEC §16): every 10 minutes, a sweep registers
 * durapay's notification URL at each account with complaints and lists the last 7 days'
 * complaints there, for whatever a lost notification did not say. Every worker whose channels
 * have complaints calls it at start, and runs it once at once (the URL registered before any
 * complaint can be lost); as the other schedules, later starts update it and keep its paused state.
 */
export async function ensureComplaintSweepSchedule(
  client: Client,
  options: { taskQueue: string; publicBaseUrl: string; everyMinutes?: number },
): Promise<'created' | 'updated'> {
  const scheduleId = complaintSweepScheduleId(options.taskQueue);
  const input: ComplaintSweepInput = { days: SWEEP_DAYS, publicBaseUrl: options.publicBaseUrl };
  const done = await createOrUpdateSchedule<typeof complaintSweepWorkflow>(client, {
    scheduleId,
    spec: { intervals: [{ every: `${options.everyMinutes ?? SWEEP_EVERY_MINUTES} minutes` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'complaintSweepWorkflow',
      workflowId: scheduleId,
      taskQueue: options.taskQueue,
      args: [input],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' },
  });
  await client.schedule.getHandle(scheduleId).trigger(ScheduleOverlapPolicy.SKIP);
  return done;
}
