/** The merchant application workflow's messages (SPEC §5.6–5.7). */
import { defineUpdate } from '@temporalio/workflow';

export const patches = {
  /** An application's submits run one at a time through the platform's handler lock. */
  applicationHandlerLock: 'application-handler-lock',
  /**
   * The audit is followed by one polling activity whose retries are the backoff, ending at each
   * change; it woke for a timer and a query at every gap (a workflow task each).
   */
  auditPollsAsActivity: 'audit-polls-as-activity',
  /**
   * A submission the channel refused ends its run only once its handler has cancelled the
   * application and answered: the run ended first, so the cancel was never written (the
   * application stayed open, and the merchant could not apply again at that channel).
   */
  refusedSubmissionCancelled: 'refused-submission-cancelled',
} as const;

export const applicationWorkflowId = (applicationId: string) => `merchant-application:${applicationId}`;

export interface MerchantApplicationInput {
  appId: string;
  applicationId: string;
  merchantId: string;
  channelCode: string;
  /** Gaps between audit polls, already scaled; the last one repeats. */
  pollGapsMs: number[];
  /** How long to keep polling before giving up (30 days, scaled). */
  pollForMs: number;
}

/** Submits the application at the channel; answers once the channel has accepted it. */
export const submitApplicationUpdate = defineUpdate<{ application_id: string }, []>('submitApplication');
