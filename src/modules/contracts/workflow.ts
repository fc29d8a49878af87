/**
 * A recurring contract (SPEC §17) as one long-lived workflow, `contract:{app_id}:{merchant_contract_no}`:
 * it offers the contract at the channel (the buyer's signing page), waits for the buyer's
 * signature (the channel's notification, or its query when that is lost), then lives one
 * period per run: it sleeps until the period's deduction is near, sends the channel's
 * pre-deduction notice, waits for the channel's window, deducts (an ordinary order of its own,
 * `pay_method: contract`), retries a failed deduction within the window under a new order
 * number, and continues as new with what it carries, so that its history stays one period long.
 *
 * Handlers only record what was asked or said (a cancel, a signature, the buyer's unsigning);
 * the main loop is the contract's one actor and decides. Workflow code runs one step at a time,
 * so a cancel can never fall between the check that the contract is active and the deduction it
 * lets through: a deduction is asked only by a contract that is active at that step, and a
 * cancel that arrives while one is in flight ends the contract at the channel at once, while the
 * deduction ends paid or reversed (a paid order, or none).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import type { ContractActivities as Activities, DeductionOutcome } from './activities';
import {
  cancelContractUpdate,
  contractFingerprint,
  contractSignedSignal,
  contractTerminatedSignal,
  openContractUpdate,
  type ContractInput,
  type ContractProgress,
} from './messages';
import {
  attemptAt,
  contractTimeOf,
  DAY_MS,
  DEDUCTION_CLOSE_MARGIN_MS,
  DEDUCTION_DAYS,
  localDayStart,
  deductionWindow,
  isFinalContractStatus,
  localDay,
  periodAmount,
  periodDueAt,
  planEnded,
  realTimeOf,
  SIGN_WITHIN_MS,
  type ContractStatus,
} from './rules';

const channel = proxyActivities<Activities>(activityProfiles.channelBackground);
/** The offer of a contract, which its create waits for: bounded, so that the create answers. */
const offer = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});
/** The pre-deduction notice: asked until the channel answers, for up to two hours; a refusal is final. */
const notice = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '2 hours',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
const db = proxyActivities<Activities>(activityProfiles.dbWrite);
const publish = proxyActivities<Activities>({
  ...activityProfiles.publish,
  retry: { ...activityProfiles.publish.retry, maximumInterval: '1 minute' },
});
/** Unsigning must reach the channel: asked until it answers. */
const unsign = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
/** A deduction's order, made through the orders module: its create answers within its own deadlines. */
const deduct = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
const follow = proxyActivities<Activities>(activityProfiles.channelPolling);
/** How long one follow of a deduction's order lasts (real time) before the workflow asks again. */
const DEDUCTION_FOLLOW_MS = 6 * 3_600_000;

export async function contractWorkflow(
  input: ContractInput,
  carried?: ContractProgress,
): Promise<ContractStatus> {
  const p: ContractProgress = carried ?? {
    status: 'signing',
    channelContractId: null,
    signUrl: null,
    signedAt: null,
    firstAt: input.plan.firstAt,
    period: 0,
    deductedCount: 0,
    deductedAmount: 0,
    lastSuccessDay: null,
  };
  const ids = { contractNo: input.contractNo };
  const fingerprint = contractFingerprint(input);
  let opened = carried !== undefined;
  let openFailure: ApplicationFailure | null = null;
  let stop: { by: 'buyer' | 'merchant'; reason: string | null } | null = null;
  let signed: { channelContractId: string; at: number } | null = null;
  const now = () => contractTimeOf(input.clock, Date.now());

  setHandler(openContractUpdate, async (req) => {
    if (req.fingerprint !== fingerprint) {
      throw ApplicationFailure.nonRetryable(
        'merchant_contract_no already used with different parameters',
        'invalid_param',
      );
    }
    const repeat = opened;
    await condition(() => opened || openFailure !== null);
    if (openFailure) throw openFailure;
    return { contract_no: input.contractNo, status: p.status, sign_url: p.signUrl, is_idempotent: repeat };
  });
  setHandler(cancelContractUpdate, async (req) => {
    if (!isFinalContractStatus(p.status)) stop ??= { by: 'merchant', reason: req.reason };
    await condition(() => isFinalContractStatus(p.status));
    return { status: p.status };
  });
  setHandler(contractSignedSignal, (s) => {
    signed ??= s;
  });
  setHandler(contractTerminatedSignal, (s) => {
    if (!isFinalContractStatus(p.status)) stop ??= { by: s.by, reason: null };
  });

  /** Sleeps until `at` on the contract's clock; false when a stop woke it first. */
  const sleepUntil = async (at: number): Promise<boolean> => {
    const wait = realTimeOf(input.clock, at) - Date.now();
    if (stop) return false;
    if (wait <= 0) return true;
    return !(await condition(() => stop !== null, wait));
  };

  const setStatus = (status: ContractStatus) => {
    p.status = status;
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: status }]);
  };

  /** Ends the contract for good: at the channel first (unless the channel ended it), then here. */
  const finish = async (
    status: 'cancelled' | 'ended' | 'failed',
    reason: string,
    by: 'buyer' | 'merchant' | null,
  ) => {
    if (by !== 'buyer') await unsign.terminateContractAtChannel({ ...ids, reason });
    await publish.finishContract({ ...ids, status, reason, cancelledBy: status === 'cancelled' ? by : null });
    setStatus(status);
  };

  const handleStop = async () => {
    const s = stop!;
    await finish(
      'cancelled',
      s.by === 'buyer'
        ? 'the buyer ended the contract at the channel'
        : (s.reason ?? 'cancelled by the merchant'),
      s.by,
    );
  };

  /** Asks the channel where the contract stands: a signature or an unsigning whose notification was lost. */
  const look = async () => {
    let st;
    try {
      st = await channel.queryContractAtChannel(ids);
    } catch (err) {
      // The channel out of reach: the next look, notice or deduction asks again.
      log.warn('the channel could not be asked where the contract stands', { ...ids, error: String(err) });
      return;
    }
    if (st.status === 'active') signed ??= { channelContractId: st.channelContractId, at: st.signedAt };
    if (st.status === 'terminated' && !isFinalContractStatus(p.status)) stop ??= { by: st.by, reason: null };
  };

  // ---- offered: the buyer's signing page ----
  if (!carried) {
    try {
      p.signUrl = (await offer.openContractAtChannel({ input })).signUrl;
    } catch (err) {
      // The activity's own failure (the channel's refusal, its code as the type), or its timeout.
      const cause = err instanceof ActivityFailure ? err.cause : err;
      openFailure =
        cause instanceof ApplicationFailure && cause.type
          ? ApplicationFailure.nonRetryable(cause.message, cause.type)
          : ApplicationFailure.nonRetryable(
              'the channel did not answer the offer of the contract; send the same request again',
              'channel_timeout',
            );
      p.status = 'failed';
      await condition(allHandlersFinished);
      return 'failed';
    }
    opened = true;
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: 'signing' }]);
  }

  // ---- signing ----
  if (p.status === 'signing') {
    const deadline = Date.parse(input.createdAt) + SIGN_WITHIN_MS * input.clock.scale;
    while (p.status === 'signing') {
      if (signed) {
        const s: { channelContractId: string; at: number } = signed;
        p.channelContractId = s.channelContractId;
        // The channel's time of the signature, on the contract's clock.
        p.signedAt = contractTimeOf(input.clock, s.at);
        p.firstAt ??= p.signedAt;
        await publish.recordContractSigned({
          ...ids,
          channelContractId: s.channelContractId,
          signedAt: p.signedAt,
          firstAt: p.firstAt,
        });
        setStatus('active');
        break;
      }
      if (stop) {
        await handleStop();
        break;
      }
      if (Date.now() >= deadline) {
        // Ended at the channel first, so that the page takes no signature after this; a signature
        // that came just before is found by the look below and the contract ends all the same.
        await finish('failed', 'the buyer did not sign within 24 hours', null);
        break;
      }
      const woken = await condition(
        () => signed !== null || stop !== null,
        Math.max(1, Math.min(deadline - Date.now(), input.signCheckGapMs)),
      );
      if (!woken && Date.now() < deadline) await look();
    }
  }

  // ---- active: one period per run ----
  while (p.status === 'active') {
    if (stop) {
      await handleStop();
      break;
    }
    const { plan, window } = input;
    if (planEnded(plan, p.period, p.deductedAmount)) {
      await finish('ended', 'the plan is complete', null);
      break;
    }
    const amount = periodAmount(plan, p.deductedAmount);
    const dueAt = periodDueAt({ ...plan, firstAt: p.firstAt! }, p.period);
    const lead = input.noticeLeadMs;
    let earliestAt = dueAt;
    const planned = deductionWindow(window, {
      dueAt,
      earliestAt: lead ? now() + lead : now(),
      lastSuccessDay: p.lastSuccessDay,
    });
    await db.recordNextDeduction({ ...ids, at: planned.opensAt, amount });
    let noticeRefused: string | null = null;
    if (lead !== null) {
      // The notice goes a lead before the window the deduction is planned for (at once when that is past).
      if (!(await sleepUntil(planned.opensAt - lead))) continue;
      try {
        await notice.sendDeductionNotice({ ...ids, amount });
        earliestAt = now() + lead;
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : err;
        noticeRefused =
          cause instanceof ApplicationFailure && cause.nonRetryable
            ? `the pre-deduction notice was refused: ${cause.message}`
            : 'the channel could not be reached for the pre-deduction notice';
        log.warn('the pre-deduction notice was refused; asking where the contract stands', {
          ...ids,
          error: noticeRefused,
        });
        await look();
        if (stop) continue;
      }
    }
    let w = deductionWindow(window, { dueAt, earliestAt, lastSuccessDay: p.lastSuccessDay });
    // The period's deduction days: a window missed without an attempt (a worker down, a task
    // late) moves to the next day's, up to the last of them.
    const lastDayEnds = localDayStart(w.opensAt, window.utcOffsetMinutes) + DEDUCTION_DAYS * DAY_MS;
    let paid = false;
    let attemptsMade = 0;
    let reason = noticeRefused ?? 'the window closed before a deduction could be made';
    for (let attempt = 0; noticeRefused === null; attempt++) {
      const at = attemptAt(w, attempt);
      if (at === null) break;
      if (!(await sleepUntil(at))) break;
      // No await between these checks and the deduction's scheduling: a cancel cannot fall between.
      if (stop) break;
      if (now() > w.closesAt - DEDUCTION_CLOSE_MARGIN_MS) {
        // A retry's window has passed (an attempt before took long): the period ends here.
        if (attemptsMade > 0) break;
        // Missed before anything was asked: the next day's window, while the period has one.
        const next = deductionWindow(window, { dueAt, earliestAt: now(), lastSuccessDay: p.lastSuccessDay });
        if (next.opensAt >= lastDayEnds) break;
        log.warn('the deduction window passed before the deduction was asked; the next day is tried', {
          ...ids,
          period: p.period + 1,
        });
        w = next;
        attempt = -1;
        continue;
      }
      attemptsMade += 1;
      const made = await deduct.makeDeduction({ ...ids, period: p.period, attempt, amount });
      let outcome: DeductionOutcome = made;
      if (made.status === 'pending') {
        // Followed until the order ends (paid, or reversed and closed), which every order does.
        let settledYet = false;
        const settled = (async () => {
          let followed: DeductionOutcome = made;
          // Each follow is bounded; an order not decided by then (a channel down for hours) is followed again.
          while (followed.status === 'pending') {
            followed = await follow.awaitDeduction({
              ...ids,
              period: p.period,
              attempt,
              untilMs: Date.now() + DEDUCTION_FOLLOW_MS,
            });
          }
          return followed;
        })().finally(() => (settledYet = true));
        await condition(() => settledYet || stop !== null);
        // A cancel meanwhile ends the contract at once; the deduction ends paid or reversed.
        if (stop && !settledYet) await handleStop();
        outcome = await settled;
      }
      if (outcome.status === 'paid') {
        paid = true;
        break;
      }
      if (outcome.status === 'failed') reason = outcome.reason;
      if (isFinalContractStatus(p.status)) break;
      // A refusal may be the buyer's unsigning, whose notification has not come (or was lost).
      await look();
    }
    // Stopped before anything was asked of the channel: the period did not happen.
    if (stop && attemptsMade === 0) continue;
    if (paid) {
      p.deductedCount += 1;
      p.deductedAmount += amount;
      p.lastSuccessDay = localDay(now(), window.utcOffsetMinutes);
    }
    p.period += 1;
    await publish.recordPeriod({
      ...ids,
      periodsDone: p.period,
      deductedCount: p.deductedCount,
      deductedAmount: p.deductedAmount,
      failedReason: paid || stop || isFinalContractStatus(p.status) ? null : reason,
    });
    if (isFinalContractStatus(p.status)) break;
    if (stop) {
      await handleStop();
      break;
    }
    if (planEnded(plan, p.period, p.deductedAmount)) {
      await finish('ended', 'the plan is complete', null);
      break;
    }
    // One period per run: what it carries is small, and its history never grows past a period's.
    // A cancel waits for the contract to end, so it is handled here rather than waited for.
    await condition(() => allHandlersFinished() || stop !== null);
    if (stop) continue;
    return continueAsNew<typeof contractWorkflow>(input, p);
  }
  await condition(allHandlersFinished);
  return p.status;
}
