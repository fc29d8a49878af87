import {
  ApplicationFailure,
  condition,
  log,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import { handlerLock } from '../../platform/workflow/lock';
import type { ComplaintActivities as Activities } from './activities';
import {
  COMPLAINT_PROCESSED,
  complaintChangedSignal,
  patches,
  completeComplaintUpdate,
  planComplaintRefundUpdate,
  replyComplaintUpdate,
  settleComplaintRefundUpdate,
  type ComplaintSummary,
  type ComplaintSweepInput,
  type ComplaintWorkflowInput,
  type PlannedRefund,
} from './messages';
import { complaintRefundNo, nextDeadline } from './rules';

const channel = proxyActivities<Activities>(activityProfiles.channelCall);
const db = proxyActivities<Activities>(activityProfiles.dbWrite);
const publish = proxyActivities<Activities>({
  ...activityProfiles.publish,
  retry: { ...activityProfiles.publish.retry, maximumInterval: '1 minute' },
});
const sweep = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

/** How many events a run takes before it continues as new (a complaint is a short conversation). */
const HISTORY_LIMIT = 2_000;

/**
 * One consumer complaint (SPEC §16), `complaint:{channel}:{complaint_id}`: reads the channel's
 * record whenever an intake says it changed, raises `complaint.reply_due` 12 hours after the
 * complaint without a reply and `complaint.overdue` at the first deadline missed, and takes the
 * merchant's actions one at a time (reply, refund, complete), each sent to the channel once
 * however often it is asked. A processed complaint waits a while for the payer to complain
 * again, then ends; an intake starts it again if the channel says more later.
 */
export async function complaintWorkflow(input: ComplaintWorkflowInput): Promise<string> {
  const ids = { channelCode: input.channelCode, complaintId: input.complaintId };
  const replied = new Set(input.replied ?? []);
  let planned: PlannedRefund | null = input.plannedRefund ?? null;
  /** Refunds the book refused or failed so far: each attempt has its own number. */
  let refundAttempts = input.refundAttempts ?? 0;
  let dirty = true;
  let summary: ComplaintSummary | null = null;

  setHandler(complaintChangedSignal, () => {
    dirty = true;
  });

  const lock = handlerLock();

  /** The record as the channel now has it. */
  async function sync(): Promise<ComplaintSummary | null> {
    dirty = false;
    const next = await publish.syncComplaint({ ...ids, account: input.account });
    if (next && (!summary || summary.state !== next.state)) {
      upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: next.state }]);
    }
    if (next && (!summary || summary.appId !== next.appId) && next.appId) {
      upsertSearchAttributes([
        { key: searchAttributes.AppId, value: next.appId },
        ...(next.tradeNo ? [{ key: searchAttributes.TradeNo, value: next.tradeNo }] : []),
      ]);
    }
    summary = next;
    return next;
  }

  const known = async (): Promise<ComplaintSummary> => {
    const s = summary ?? (await sync());
    if (!s) throw ApplicationFailure.nonRetryable('the channel has no such complaint', 'complaint_not_found');
    return s;
  };

  setHandler(replyComplaintUpdate, (req) =>
    lock.runExclusive(async () => {
      const s = await known();
      if (replied.has(req.key)) {
        await db.recordComplaintAction({
          ...ids,
          actor: req.actor,
          action: 'reply',
          outcome: 'repeated',
          detail: {},
        });
        return { repeated: true };
      }
      if (s.state === 'processed') {
        throw ApplicationFailure.nonRetryable(
          'the complaint is processed: it takes no reply',
          COMPLAINT_PROCESSED,
        );
      }
      await channel.replyToComplaint({
        ...ids,
        account: input.account,
        subMerchantNo: s.subMerchantNo,
        content: req.content,
        imageIds: req.imageIds,
      });
      replied.add(req.key);
      await db.recordComplaintAction({
        ...ids,
        actor: req.actor,
        action: 'reply',
        outcome: 'done',
        detail: { content: req.content, images: req.imageIds.length },
      });
      await sync();
      return { repeated: false };
    }),
  );

  setHandler(completeComplaintUpdate, (req) =>
    lock.runExclusive(async () => {
      const s = await known();
      if (s.state === 'processed') {
        await db.recordComplaintAction({
          ...ids,
          actor: req.actor,
          action: 'complete',
          outcome: 'repeated',
          detail: {},
        });
        return { repeated: true };
      }
      await channel.completeComplaint({ ...ids, account: input.account, subMerchantNo: s.subMerchantNo });
      await db.recordComplaintAction({
        ...ids,
        actor: req.actor,
        action: 'complete',
        outcome: 'done',
        detail: {},
      });
      await sync();
      return { repeated: false };
    }),
  );

  setHandler(planComplaintRefundUpdate, (req) =>
    lock.runExclusive(async () => {
      const s = await known();
      const merchantRefundNo = complaintRefundNo(input.channelCode, input.complaintId, refundAttempts);
      if (!s.appId || !s.tradeNo) {
        throw ApplicationFailure.nonRetryable('the complaint names no order durapay has', 'order_not_found');
      }
      // One refund per complaint: the same one again answers it; another amount is refused.
      const held = planned ?? (s.refundNo && s.refundAmount !== null ? { amount: s.refundAmount } : null);
      if (held && held.amount !== req.amount) {
        throw ApplicationFailure.nonRetryable(
          `the complaint already has a refund of ${held.amount}; a complaint is refunded once`,
          'invalid_param',
        );
      }
      if (s.refundNo) {
        return {
          amount: req.amount,
          reason: req.reason,
          merchantRefundNo,
          at: Date.now(),
          refundNo: s.refundNo,
          repeated: true,
        };
      }
      if (!planned) {
        planned = { amount: req.amount, reason: req.reason, merchantRefundNo, at: Date.now() };
        await db.recordComplaintRefund({ ...ids, amount: req.amount, refundNo: null });
      }
      return { ...planned, refundNo: null, repeated: false };
    }),
  );

  setHandler(settleComplaintRefundUpdate, (req) =>
    lock.runExclusive(async () => {
      // The complaint's own refund number: a settle after the plan was looked up in the book
      // (its caller slow) still records what the book made.
      const mine = complaintRefundNo(input.channelCode, input.complaintId, refundAttempts);
      if (req.merchantRefundNo !== mine) return;
      if (req.refundNo === null) {
        if (!planned) return;
        // The next attempt is a refund of its own: the book keeps this number for the refused one.
        refundAttempts += 1;
        // The book refused it: nothing was refunded, and the complaint may be refunded otherwise.
        await db.recordComplaintAction({
          ...ids,
          actor: req.actor,
          action: 'refund',
          outcome: 'refused',
          detail: { amount: planned.amount, refusal: req.refusal ?? null },
        });
        planned = null;
        await db.recordComplaintRefund({ ...ids, amount: null, refundNo: null });
        return;
      }
      const amount = planned?.amount ?? summary?.refundAmount ?? null;
      if (summary?.refundNo === req.refundNo && !planned) return;
      await db.recordComplaintRefund({ ...ids, amount, refundNo: req.refundNo });
      await db.recordComplaintAction({
        ...ids,
        actor: req.actor,
        action: 'refund',
        outcome: 'done',
        detail: { amount, refund_no: req.refundNo },
      });
      planned = null;
      await sync();
      await approveRefund();
    }),
  );

  /**
   * A refund request the book refunded is approved at the channel (the payer's request answered,
   * not only the money sent). Runs recorded before it were not, and replay as they ran.
   */
  async function approveRefund(): Promise<void> {
    const s = summary;
    if (!s || s.problemType !== 'refund' || s.state === 'processed') return;
    if (!patched(patches.refundApproval)) return;
    await channel.approveComplaintRefund({ ...ids, account: input.account });
  }

  /** A plan whose caller never said how the book answered: the book says. */
  async function settleLostPlan(): Promise<void> {
    const s = summary;
    if (!planned || !s?.appId) return;
    const found = await db.findComplaintRefund({
      appId: s.appId,
      merchantRefundNo: planned.merchantRefundNo,
    });
    // None yet may be a caller still on its way: asked again later, and dropped only once the
    // book has a refused one under the number (the next attempt then has its own).
    if (found === null) {
      planned = { ...planned, at: Date.now() };
      return;
    }
    if (found.failed) {
      refundAttempts += 1;
      await db.recordComplaintRefund({ ...ids, amount: null, refundNo: null });
    } else {
      await db.recordComplaintRefund({ ...ids, amount: found.amount, refundNo: found.refundNo });
      await approveRefund();
    }
    planned = null;
    dirty = true;
  }

  /** When a sync the channel did not answer is tried again (epoch ms). */
  let syncAgainAt: number | undefined;

  /**
   * Whether the loop has something new to look at: it waits for no handler to hold the lock, so
   * that its own commands (timers, reads) never interleave with an action's in one activation,
   * whatever interceptors (tracing) add to a handler's steps.
   */
  const news = (seen: ComplaintSummary | null) => (dirty || summary !== seen) && !lock.isLocked();

  for (;;) {
    if (dirty) {
      try {
        await lock.runExclusive(sync);
        syncAgainAt = undefined;
      } catch (err) {
        // The channel would not say (a bad answer, an account gone): the deadlines go on from
        // the record, and the channel is asked again in a while.
        log.warn('complaint not read from the channel; asked again later', {
          complaint_id: input.complaintId,
          error: err instanceof Error ? err.message : String(err),
        });
        dirty = false;
        syncAgainAt = Date.now() + input.unsettledMs;
        summary ??= null;
      }
    }
    const s = summary;
    const seen: ComplaintSummary | null = summary;
    if (!s) {
      // The channel has no such complaint (yet): wait for an intake to say it does.
      const wait = syncAgainAt === undefined ? input.quietMs : Math.max(1, syncAgainAt - Date.now());
      if (!(await condition(() => news(seen), wait))) {
        if (syncAgainAt === undefined) return 'unknown';
        dirty = true;
      }
      continue;
    }
    const due = nextDeadline(s);
    const planDue = planned ? planned.at + input.unsettledMs : undefined;
    const wakeAt = Math.min(due?.at ?? Infinity, planDue ?? Infinity, syncAgainAt ?? Infinity);
    if (wakeAt === Infinity && s.state === 'processed') {
      // Processed: the payer may complain again within the quiet time; then the run ends, once
      // no action is being taken (a repeated complete, say).
      const heard = await condition(() => news(seen), input.quietMs);
      if (!heard) {
        await condition(() => !lock.isLocked());
        if (!dirty && summary === seen) return 'processed';
      }
      continue;
    }
    // An action's own read of the channel (a reply, a completion) moves the deadlines: woken by it.
    const woken =
      wakeAt === Infinity
        ? (await condition(() => news(seen)), true)
        : await condition(() => news(seen), Math.max(1, wakeAt - Date.now()));
    if (!woken) {
      if (syncAgainAt !== undefined && Date.now() >= syncAgainAt) dirty = true;
      if (planDue !== undefined && Date.now() >= planDue) await lock.runExclusive(settleLostPlan);
      if (due && Date.now() >= due.at) {
        const next = await lock.runExclusive(() =>
          publish.raiseComplaintDeadline({ ...ids, kind: due.kind }),
        );
        if (next) summary = next;
      }
    }
    if (workflowInfo().historyLength > HISTORY_LIMIT || workflowInfo().continueAsNewSuggested) {
      await condition(() => !lock.isLocked());
      await continueAsNew<typeof complaintWorkflow>({
        ...input,
        replied: [...replied],
        plannedRefund: planned,
        refundAttempts,
      });
    }
  }
}

/** The safety net's run: one sweep of every account's recent complaints (the Schedule's action). */
export async function complaintSweepWorkflow(
  input: ComplaintSweepInput,
): Promise<{ listed: number; told: number }> {
  const { listed, told } = await sweep.sweepComplaints(input);
  return { listed, told };
}
