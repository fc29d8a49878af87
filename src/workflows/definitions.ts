/**
 * Names shared by the API, the worker and the workflows: workflow ids, task queue, search
 * attributes. Deterministic and dependency-free so that both workflow code and Node code
 * may import it.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineSignal } from '@temporalio/workflow';

export const DEFAULT_TASK_QUEUE = 'durapay';

/** The custom search attributes of SPEC §7, all Keyword. */
export const searchAttributes = {
  AppId: defineSearchAttributeKey('AppId', SearchAttributeType.KEYWORD),
  TradeNo: defineSearchAttributeKey('TradeNo', SearchAttributeType.KEYWORD),
  MerchantOrderNo: defineSearchAttributeKey('MerchantOrderNo', SearchAttributeType.KEYWORD),
  MerchantId: defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD),
  ChannelCode: defineSearchAttributeKey('ChannelCode', SearchAttributeType.KEYWORD),
  BizStatus: defineSearchAttributeKey('BizStatus', SearchAttributeType.KEYWORD),
} as const;

export const SEARCH_ATTRIBUTE_KEYS = Object.values(searchAttributes);

export const workflowIds = {
  diagnostic: (runId: string) => `diagnostic:${runId}`,
  notification: (notificationId: string) => `notification:${notificationId}`,
};

export interface NotificationWorkflowInput {
  notificationId: string;
  appId: string;
  /** Waits between attempts, already scaled; attempts = gaps + 1. */
  gapsMs: number[];
}

export type NotificationOutcome = 'delivered' | 'failed';

/** Starts a fresh attempt series now (POST /api/v1/notifications/{id}/resend). */
export const resendNotificationSignal = defineSignal('resendNotification');

export interface DiagnosticInput {
  runId: string;
  /** How long the workflow waits between its two steps, already scaled. */
  pauseMs: number;
}

export interface DiagnosticResult {
  runId: string;
  steps: number[];
  insertedSteps: number[];
}
