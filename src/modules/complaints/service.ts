import { createHash } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { ChannelError } from '../../channels/errors';
import type { CallbackRequest, ComplaintsPort } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { scaleDuration } from '../../platform/durations';
import { AppError } from '../../platform/errors';
import type { KeysetPage, KeysetResult } from '../../platform/pagination';
import type { Logger } from '../../platform/logger';
import { deliverUpdate } from '../../platform/temporal-updates';
import { workflowCallError } from '../../platform/temporal-failures';
import type { RefundService } from '../refunds';
import {
  complaintChangedSignal,
  complaintWorkflowId,
  completeComplaintUpdate,
  planComplaintRefundUpdate,
  replyComplaintUpdate,
  settleComplaintRefundUpdate,
  type ComplaintActor,
  type ComplaintWorkflowInput,
} from './messages';
import type { Complaint } from './model';
import { ComplaintRepository, type ComplaintFilter } from './repository';
import { IMAGE_MAX_BYTES, QUIET_AFTER_PROCESSED_MS, UNSETTLED_REFUND_MS } from './rules';
import { complaintView, type ComplaintView } from './view';
import type { complaintWorkflow } from './workflow';

/** The workflow input of a complaint at a channel account, durations scaled. */
export function complaintInput(
  channelCode: string,
  account: string,
  complaintId: string,
  timeScale: number,
): ComplaintWorkflowInput {
  return {
    channelCode,
    account,
    complaintId,
    quietMs: scaleDuration(QUIET_AFTER_PROCESSED_MS, timeScale),
    // Never shorter than a request's own wait on the book, whatever the time scale.
    unsettledMs: Math.max(scaleDuration(UNSETTLED_REFUND_MS, timeScale), 60_000),
  };
}

/**
 * Starts a complaint's workflow, or tells the running one to read the channel again: the one
 * place both intakes (the notification, the sweep's activity) go through.
 */
export async function startOrSignalComplaint(
  deps: { client: Client; taskQueue: string; timeScale: number },
  channelCode: string,
  account: string,
  complaintId: string,
  source: 'notification' | 'sweep',
): Promise<void> {
  await deps.client.workflow.signalWithStart<typeof complaintWorkflow, [{ source: typeof source }]>(
    'complaintWorkflow',
    {
      workflowId: complaintWorkflowId(channelCode, complaintId),
      taskQueue: deps.taskQueue,
      args: [complaintInput(channelCode, account, complaintId, deps.timeScale)],
      signal: complaintChangedSignal,
      signalArgs: [{ source }],
    },
  );
}

export interface ComplaintServiceDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  timeScale: number;
  channels: ChannelRegistry;
  payloadKeys: Keyring;
  requestTimeoutMs: number;
}

/** A reply's fields, validated (schemas.ts). */
export interface ReplyBody {
  content: string;
  images?: { filename: string; data: string }[];
}

export interface RefundBodyOfComplaint {
  refund_amount: number;
  reason?: string;
}

/**
 * The complaints capability (SPEC §16): the only code that starts, updates or signals complaint
 * workflows. An app sees the complaints about its own orders; an operator (no app) sees all.
 */
export class ComplaintService {
  readonly repository: ComplaintRepository;

  constructor(
    private readonly deps: ComplaintServiceDeps,
    private readonly refunds: RefundService,
  ) {
    this.repository = new ComplaintRepository(deps.db, deps.payloadKeys);
  }

  /** The app's complaint (any for an operator, `appId` undefined), or 404 complaint_not_found. */
  async find(appId: string | undefined, complaintId: string): Promise<Complaint> {
    const found = await this.repository.findOfApp(appId, complaintId);
    if (!found) throw new AppError('complaint_not_found', 'complaint not found');
    return found;
  }

  async view(appId: string | undefined, complaintId: string): Promise<ComplaintView> {
    return complaintView(await this.find(appId, complaintId));
  }

  list(filter: ComplaintFilter, page: KeysetPage): Promise<KeysetResult<Complaint>> {
    return this.repository.list(filter, page);
  }

  /** Runs an action on the complaint's workflow (its run started again when it has ended). */
  private async act<T>(
    c: Complaint,
    log: Logger,
    run: (handle: { start: WithStartWorkflowOperation<typeof complaintWorkflow> }) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + this.deps.requestTimeoutMs;
    try {
      return await deliverUpdate(
        () =>
          run({
            start: new WithStartWorkflowOperation<typeof complaintWorkflow>('complaintWorkflow', {
              workflowId: complaintWorkflowId(c.channelCode, c.complaintId),
              taskQueue: this.deps.taskQueue,
              args: [complaintInput(c.channelCode, c.account, c.complaintId, this.deps.timeScale)],
              workflowIdConflictPolicy: 'USE_EXISTING',
            }),
          }),
        { client: this.deps.client, deadline, log, withStart: true },
      );
    } catch (err) {
      const answer = workflowCallError(err, { codes: 'every' });
      if (answer !== 'unanswered') throw answer;
      throw new AppError(
        'channel_timeout',
        'the outcome is not known yet: the channel did not answer within the request deadline; send the same request again to learn it, it is made at most once',
      );
    }
  }

  private port(c: Complaint): ComplaintsPort {
    const port = this.deps.channels.get(c.channelCode, c.account)?.complaints;
    if (!port)
      throw new AppError('channel_not_support', `channel ${c.channelCode} does not take complaint replies`);
    return port;
  }

  /** Replies to the payer (text, and images uploaded through the channel's image API first). */
  async reply(
    actor: ComplaintActor,
    appId: string | undefined,
    complaintId: string,
    body: ReplyBody,
    log: Logger,
  ): Promise<ComplaintView> {
    const c = await this.find(appId, complaintId);
    if (c.state === 'processed')
      throw new AppError('complaint_processed', 'the complaint is processed: it takes no reply');
    const images = (body.images ?? []).map((image, i) => {
      const bytes = Buffer.from(image.data, 'base64');
      if (bytes.length === 0)
        throw new AppError('invalid_param', `"images[${i}].data" is not base64 image bytes`);
      if (bytes.length > IMAGE_MAX_BYTES) {
        throw new AppError('invalid_param', `"images[${i}].data" is larger than ${IMAGE_MAX_BYTES} bytes`);
      }
      return { filename: image.filename, bytes };
    });
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          // A continued complaint is a new round: the same words again are a new reply to it.
          c.complaintTimes,
          body.content,
          ...images.map((i) => createHash('sha256').update(i.bytes).digest('hex')),
        ]),
      )
      .digest('hex');
    const port = this.port(c);
    const imageIds: string[] = [];
    for (const [i, image] of images.entries()) {
      try {
        imageIds.push(await port.uploadImage(image.bytes, image.filename));
      } catch (err) {
        if (err instanceof ChannelError && err.kind === 'refused') {
          throw new AppError('invalid_param', `"images[${i}]": ${err.message}`);
        }
        throw new AppError(
          'channel_not_support',
          `the channel did not take images[${i}]: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    await this.act(c, log, ({ start }) =>
      this.deps.client.workflow.executeUpdateWithStart(replyComplaintUpdate, {
        args: [{ actor, content: body.content, imageIds, key }],
        startWorkflowOperation: start,
      }),
    );
    return this.view(appId, complaintId);
  }

  /** Tells the channel the merchant has dealt with the complaint. */
  async complete(
    actor: ComplaintActor,
    appId: string | undefined,
    complaintId: string,
    log: Logger,
  ): Promise<ComplaintView> {
    const c = await this.find(appId, complaintId);
    await this.act(c, log, ({ start }) =>
      this.deps.client.workflow.executeUpdateWithStart(completeComplaintUpdate, {
        args: [{ actor }],
        startWorkflowOperation: start,
      }),
    );
    return this.view(appId, complaintId);
  }

  /**
   * Refunds the complained order through its book (RefundService, like any refund: it counts
   * against what the order can refund, and a refusal is the book's answer). The complaint plans
   * it first, so that every request for it names the same refund (its merchant_refund_no), and
   * records its number once the book made it.
   */
  async refund(
    actor: ComplaintActor,
    appId: string | undefined,
    complaintId: string,
    body: RefundBodyOfComplaint,
    log: Logger,
  ): Promise<ComplaintView & { refund: Awaited<ReturnType<RefundService['refund']>> }> {
    const c = await this.find(appId, complaintId);
    if (!c.appId || !c.tradeNo)
      throw new AppError('order_not_found', 'the complaint names no order durapay has');
    const plan = await this.act(c, log, ({ start }) =>
      this.deps.client.workflow.executeUpdateWithStart(planComplaintRefundUpdate, {
        args: [{ actor, amount: body.refund_amount, reason: body.reason ?? null }],
        startWorkflowOperation: start,
      }),
    );
    const settle = (refundNo: string | null, refusal?: string) =>
      this.act(c, log, ({ start }) =>
        this.deps.client.workflow.executeUpdateWithStart(settleComplaintRefundUpdate, {
          args: [
            { actor, merchantRefundNo: plan.merchantRefundNo, refundNo, ...(refusal ? { refusal } : {}) },
          ],
          startWorkflowOperation: start,
        }),
      );
    let refund;
    try {
      refund = await this.refunds.refund(
        c.appId,
        {
          trade_no: c.tradeNo,
          refund_amount: plan.amount,
          ...(plan.reason ? { reason: plan.reason } : {}),
          merchant_refund_no: plan.merchantRefundNo,
        },
        log,
      );
    } catch (err) {
      // The book's refusal is the answer; its outcome unknown (channel_timeout) leaves the plan,
      // which a repeat or the workflow's own look at the book settles.
      if (err instanceof AppError && err.code !== 'channel_timeout') await settle(null, err.code);
      throw err;
    }
    // A refund the book already failed under this number is a refusal too: the next attempt
    // has a number of its own.
    if (refund.status === 'failed') {
      await settle(null, 'channel_refund_fail');
      throw new AppError('channel_refund_fail', 'the channel refused the refund');
    }
    if (!plan.refundNo) await settle(refund.refund_no);
    return { ...(await this.view(appId, complaintId)), refund };
  }

  /**
   * A complaint notification (SPEC §16): verified with the keys of whichever of the channel's
   * accounts it was sealed for, it starts or signals its complaint's workflow, which reads the
   * complaint back from the channel (the notification itself says only which one changed).
   * One that no account's keys verify is refused (`verified: false`, the reason); a workflow
   * that could not be reached throws, and the channel sends the notification again.
   */
  async acceptNotification(
    channelCode: string,
    req: CallbackRequest,
  ): Promise<{ verified: true; complaintId: string; eventId: string } | { verified: false; reason: string }> {
    let lastError: unknown = new ChannelError('not_supported', `channel ${channelCode} has no complaints`);
    for (const account of this.deps.channels.accounts(channelCode)) {
      const port = this.deps.channels.get(channelCode, account)?.complaints;
      if (!port) continue;
      let decoded;
      try {
        decoded = await port.decodeNotification(req);
      } catch (err) {
        lastError = err;
        continue;
      }
      await startOrSignalComplaint(this.deps, channelCode, account, decoded.complaintId, 'notification');
      return { verified: true, complaintId: decoded.complaintId, eventId: decoded.eventId };
    }
    return { verified: false, reason: lastError instanceof Error ? lastError.message : String(lastError) };
  }

  /** Whether any configured channel has complaints (the notification route and the sweep need one). */
  hasComplaints(channelCode: string): boolean {
    return this.deps.channels
      .accounts(channelCode)
      .some((a) => this.deps.channels.get(channelCode, a)?.complaints);
  }
}
