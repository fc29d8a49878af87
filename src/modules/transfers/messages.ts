/** The transfer workflow's messages (SPEC §11): its id, input, updates and the result signal. */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { TransferStep } from './rules';

export const transferWorkflowId = (transferNo: string): string => `transfer:${transferNo}`;

export interface TransferWorkflowInput {
  appId: string;
  transferNo: string;
  channelCode: string;
  merchantId: string | null;
  /** Where the channel posts the transfer's result: durapay's callback endpoint for the channel. */
  callbackUrl: string;
  /** Gaps between queries while the transfer is followed (the order backoff, scaled). */
  pollGapsMs: number[];
  /** How long one polling activity follows before the workflow looks again (a window, not an end). */
  pollForMs: number;
  /**
   * How long after an unanswered create the channel must still not know the transfer before it
   * is taken as never received (failed, nothing paid): far past any request's own deadline.
   */
  neverReceivedAfterMs?: number;
}

/**
 * Answered once the channel has been asked to make the transfer (or the asking ended without an
 * answer, which the workflow then follows by query); fails `channel_transfer_fail` when the
 * channel refused it. Every request for the transfer waits on it: 20 identical requests, one call.
 */
export const transferCreatedUpdate = defineUpdate<void>('transferCreated');

/** Asks the channel to cancel; answered with the state the channel gave (the row says it too). */
export const cancelTransferUpdate = defineUpdate<void>('cancelTransfer');

/** A channel's callback about the transfer, verified by the API. */
export const transferResultSignal = defineSignal<[TransferStep]>('transferResult');
