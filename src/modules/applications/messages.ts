/** The merchant application workflow's messages (SPEC §5.6–5.7). */
import { defineUpdate } from '@temporalio/workflow';

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
