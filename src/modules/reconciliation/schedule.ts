import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { reconciliationScheduleId, type ReconciliationDayInput } from './messages';
import type { reconciliationDayWorkflow } from './workflow';

export interface ReconciliationScheduleOptions {
  taskQueue: string;
  /** When the day before is reconciled, `HH:MM` in `timeZone` (RECONCILIATION_AT). */
  at: string;
  /** IANA time zone of `at` (RECONCILIATION_TIME_ZONE). */
  timeZone: string;
}

/**
 * Makes sure the daily reconciliation schedule of this task queue exists as configured (SPEC
 * §10: by default 10:30 Asia/Shanghai, when WeChat Pay's and Alipay's statements of the day
 * before are ready); every worker calls it at start. As with the callback retention's schedule,
 * the first start creates it and later ones update its spec and keep its paused state.
 */
export async function ensureReconciliationSchedule(
  client: Client,
  options: ReconciliationScheduleOptions,
): Promise<'created' | 'updated'> {
  const scheduleId = reconciliationScheduleId(options.taskQueue);
  const [hour, minute] = options.at.split(':').map(Number) as [number, number];
  const spec = { calendars: [{ hour, minute }], timezone: options.timeZone };
  const input: ReconciliationDayInput = {};
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'reconciliationDayWorkflow',
    workflowId: scheduleId,
    taskQueue: options.taskQueue,
    args: [input] as Parameters<typeof reconciliationDayWorkflow>,
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' as const };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(scheduleId).update((previous) => ({
    spec,
    action,
    policies,
    state: { paused: previous.state.paused, note: previous.state.note },
  }));
  return 'updated';
}
