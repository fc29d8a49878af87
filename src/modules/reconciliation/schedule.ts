import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { createOrUpdateSchedule } from '../../platform/temporal-schedules';
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
 * the first start creates it and later ones update its spec and keep its paused state
 * (platform/temporal-schedules.ts). Catches up on a missed day for a day; one run at a time.
 */
export async function ensureReconciliationSchedule(
  client: Client,
  options: ReconciliationScheduleOptions,
): Promise<'created' | 'updated'> {
  const scheduleId = reconciliationScheduleId(options.taskQueue);
  const [hour, minute] = options.at.split(':').map(Number) as [number, number];
  const input: ReconciliationDayInput = {};
  return createOrUpdateSchedule<typeof reconciliationDayWorkflow>(client, {
    scheduleId,
    spec: { calendars: [{ hour, minute }], timezone: options.timeZone },
    action: {
      type: 'startWorkflow',
      workflowType: 'reconciliationDayWorkflow',
      workflowId: scheduleId,
      taskQueue: options.taskQueue,
      args: [input],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  });
}
