/*
 * The patch markers (`patched()`) each workflow type of the production bundle asks, read from
 * its module's messages.ts: a module that exports `patches` there is listed by
 * `durapay versions` with no change here. The keys are typed by src/workflows/index.ts, so a
 * workflow type added to the bundle fails to compile until it is named below.
 */
import * as applications from '../modules/applications/messages';
import * as callbacks from '../modules/callbacks/messages';
import * as complaints from '../modules/complaints/messages';
import * as contracts from '../modules/contracts/messages';
import * as merchants from '../modules/merchants/messages';
import * as notifications from '../modules/notifications/messages';
import * as orders from '../modules/orders/messages';
import * as reconciliation from '../modules/reconciliation/messages';
import * as refunds from '../modules/refunds/messages';
import * as transfers from '../modules/transfers/messages';
import type * as Workflows from '../workflows';

type WorkflowType = keyof typeof Workflows;

/**
 * Each workflow type's module messages. A module of two workflow types (reconciliation) lists
 * its markers under both: a marker one of them never asks shows its open runs as lacking it,
 * which errs on the side of waiting.
 */
const messagesOf: Record<WorkflowType, object> = {
  orderWorkflow: orders,
  refundWorkflow: refunds,
  merchantApplicationWorkflow: applications,
  notificationWorkflow: notifications,
  callbackRetentionWorkflow: callbacks,
  channelTokenWorkflow: merchants,
  reconciliationWorkflow: reconciliation,
  reconciliationDayWorkflow: reconciliation,
  transferWorkflow: transfers,
  complaintWorkflow: complaints,
  complaintSweepWorkflow: complaints,
  contractWorkflow: contracts,
};

function markersIn(messages: object): string[] {
  const patches = (messages as { patches?: Record<string, unknown> }).patches;
  if (patches === undefined) return [];
  return Object.entries(patches).map(([name, marker]) => {
    if (typeof marker !== 'string' || marker === '')
      throw new Error(`patches.${name} is not a patch marker (a non-empty string)`);
    return marker;
  });
}

/** Every workflow type of the production bundle and the markers its code asks, in the order declared. */
export function workflowPatches(): { workflowType: WorkflowType; markers: string[] }[] {
  return (Object.entries(messagesOf) as [WorkflowType, object][]).map(([workflowType, messages]) => ({
    workflowType,
    markers: markersIn(messages),
  }));
}
