/**
 * Every activity attempt a test's worker runs, by workflow and activity type, counted where it
 * happens (an activity interceptor). A request to a channel is made only from inside an attempt,
 * so a channel that saw more requests than attempts was asked from somewhere it must not be. The
 * history cannot give this bound: a local activity's marker records only the attempt that ended
 * it, and a workflow task the server drops (a speculative task for updates) leaves no event.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export interface AttemptCounter {
  interceptor: ActivityInterceptorsFactory;
  count(workflowId: string, activityType: string): number;
}

export function attemptCounter(): AttemptCounter {
  const attempts = new Map<string, number>();
  const key = (workflowId: string, activityType: string) => `${workflowId}\n${activityType}`;
  return {
    interceptor: (ctx) => ({
      inbound: {
        execute: (input, next) => {
          const k = key(ctx.info.workflowExecution?.workflowId ?? '', ctx.info.activityType);
          attempts.set(k, (attempts.get(k) ?? 0) + 1);
          return next(input);
        },
      },
    }),
    count: (workflowId, activityType) => attempts.get(key(workflowId, activityType)) ?? 0,
  };
}
