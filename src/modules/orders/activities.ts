// Longer than 400 lines: one factory's activities, each a short step over the channel's ports or
// the repository, sharing the factory's dependencies; their names are in workflow histories.
import { ApplicationFailure } from '@temporalio/common';
import { ChannelError, channelFailure, toActivityFailure } from '../../channels/errors';
import {
  portOf,
  type Channel,
  type ChannelContext,
  type CreatePaymentResult,
  type TradeContext,
  type PaymentState,
  type ProfitShareReceiver,
  type RefundState,
  type ShareReturnState,
} from '../../channels/ports';
import { holdsToken, type ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Logger } from '../../platform/logger';
import type { Keyring } from '../../platform/crypto/keyring';
import {
  isPaidStatus,
  type CloseReason,
  type OrderStatus,
  type PayMethod,
  type ProfitSharingStatus,
} from './rules';
import type { NotificationEvent } from '../notifications/rules';
import { OrderRepository, type NewOrder, type ShareStep } from './repository';
import type { Order } from './model';
import { openSavedState, sealSavedState } from './saved-states';
import { orderView } from './view';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import type { NotificationPublisher } from '../notifications';
import { NEW_STATUS, type WorkerMetrics } from '../../platform/worker-metrics';

/**
 * Whom an order's channel calls act for (SPEC §5.8): the channel account it was created with
 * (an Alipay token opened as it is now, refreshed or not), the sub-merchant number it recorded,
 * or, for an order recorded before orders kept theirs, its merchant's.
 */
export async function accountContextOf(
  order: {
    appId: string;
    merchantId: string | null;
    channelCode: string | null;
    subMerchantNo: string | null;
    channelAccountId?: string | number | null;
  },
  merchants: MerchantRepository,
  accounts: ChannelAccountRepository,
): Promise<Pick<ChannelContext, 'subMerchantNo' | 'appAuthToken'>> {
  if (order.channelAccountId !== null && order.channelAccountId !== undefined) {
    const account = await accounts.byId(Number(order.channelAccountId));
    if (!account) throw new Error(`the order's channel account ${order.channelAccountId} is missing`);
    if (holdsToken(account.channelCode, account.kind)) {
      // Never acts for the merchant without its token: the user id alone would read as an smid.
      if (!account.token) throw new Error(`channel account ${account.id} holds no token`);
      return {
        appAuthToken: account.token,
        ...(account.accountNo ? { subMerchantNo: account.accountNo } : {}),
      };
    }
    if (account.accountNo) return { subMerchantNo: account.accountNo };
  }
  if (order.subMerchantNo) return { subMerchantNo: order.subMerchantNo };
  // An order from before orders kept their number: its merchant's, only if it is at this channel.
  const merchant = order.merchantId ? await merchants.find(order.appId, order.merchantId) : null;
  return merchant?.subMerchantNo && merchant.channelCode === order.channelCode
    ? { subMerchantNo: merchant.subMerchantNo }
    : {};
}

/**
 * The order's channel context, from the read model: the workflows' activity inputs are recorded
 * in histories and name only the order. Orders record no account: the default one.
 */
export async function tradeContext(
  orders: OrderRepository,
  merchants: MerchantRepository,
  accounts: ChannelAccountRepository,
  tradeNo: string,
): Promise<TradeContext> {
  const order = await orders.findOrderByTradeNo(tradeNo);
  if (!order) return { channelTradeNo: null };
  return {
    currency: order.currency,
    channelTradeNo: order.channelTradeNo,
    ...(await accountContextOf(order, merchants, accounts)),
  };
}

/**
 * A `checkout` order's pick refused because the order's row already names another channel (or
 * the order is no longer pending): never retried, and never a second order at another channel.
 */
function takenFailure(tradeNo: string, channelCode: string | null): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    channelCode
      ? `order ${tradeNo} is being paid at ${channelCode}`
      : `order ${tradeNo} is no longer pending`,
    'invalid_param',
  );
}

/** A create as the order asks its channel for it. */
export interface ChannelCreate {
  channelCode: string;
  tradeNo: string;
  amount: number;
  currency: string;
  payMethod: string;
  subject: string;
  expireAt: string;
  callbackUrl: string;
  extra: Record<string, unknown> | null;
  subMerchantNo: string | null;
  /** The merchant's channel account (absent in older histories: subMerchantNo says it all). */
  channelAccountId?: number | null;
  profitSharing: boolean;
}

/** A barcode payment as the order asks its channel for it (SPEC §14). */
export interface ChannelBarcode {
  channelCode: string;
  tradeNo: string;
  amount: number;
  currency: string;
  subject: string;
  authCode: string;
  deviceId: string | null;
  storeId: string | null;
  callbackUrl: string;
  subMerchantNo: string | null;
  channelAccountId: number | null;
  profitSharing: boolean;
  /** A contract's deduction (SPEC §17): taken under the contract, with no buyer's code. */
  contract?: { contractNo: string; channelContractId: string };
}

/**
 * What the channel made of a barcode payment, for the order's workflow: paid, paying (the buyer
 * confirms), refused (the code: the channel's words), or unknown (no answer, or one that could
 * not be read: the payment must be reversed).
 */
export type BarcodeOutcome =
  | { outcome: 'paid'; channelTradeNo: string; paidAt: string }
  | { outcome: 'paying' }
  | { outcome: 'refused'; message: string }
  | { outcome: 'unknown'; message: string };

/** What a reverse did, for the workflow: reversed, asked to repeat, refused (the payment stands), or unknown. */
export type ReverseOutcome =
  | { outcome: 'reversed'; refunded?: boolean; unseen?: boolean }
  | { outcome: 'retry'; message: string }
  | { outcome: 'refused'; message: string }
  | { outcome: 'unknown'; message: string };

/** How a sharing the channel settles later is followed within one attempt: 10 looks 2 s apart. */
const SHARE_FOLLOW_POLLS = 10;
const SHARE_FOLLOW_GAP_MS = 2_000;

/** A refund the order has decided, as it is recorded before the channel hears of it. */
export interface NewRefund {
  refundNo: string;
  appId: string;
  tradeNo: string;
  merchantRefundNo: string | null;
  refundAmount: number;
  reason: string | null;
  notifyUrl: string | null;
  createdAt: string;
}

/** A refund as the order asks its channel for it. */
export interface ChannelRefund {
  channelCode: string;
  tradeNo: string;
  refundNo: string;
  amount: number;
  totalAmount: number;
  reason: string | null;
  callbackUrl: string;
  /** Parts of the share taken back with this refund (channels whose returns travel on it). */
  shareReturns?: (ProfitShareReceiver & { amount: number })[];
}

/** A refund's final result, as its row records it. */
export interface RefundOutcome {
  refundNo: string;
  status: 'success' | 'failed' | 'abnormal';
  channelRefundNo: string | null;
  refundTime: string | null;
  failReason: string | null;
}

/**
 * The steps of a refund the order has decided: record it before the channel hears of it, ask
 * the channel, record the channel's number, or record it failed when the channel refused it.
 * The refunds module keeps the refunds' rows and serves these under these names
 * (modules/refunds/activities.ts); the order workflow names only this contract.
 */
export interface OrderRefundActivities {
  recordRefundCreated(refund: NewRefund): Promise<void>;
  requestChannelRefund(input: ChannelRefund): Promise<RefundState>;
  recordRefundChannelNo(input: { refundNo: string; channelRefundNo: string | null }): Promise<void>;
  recordRefundSettled(input: RefundOutcome): Promise<void>;
}

/** What the orders module's activities need. */
export interface OrderActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  /** Order status changes, counted for the worker's `GET /metrics`. */
  metrics: WorkerMetrics;
  /** Scales the waits between looks at a sharing the channel settles later (tests run faster). */
  timeScale: number;
  /** How order events reach the merchant. */
  publisher: Pick<NotificationPublisher, 'publish'>;
  /** Seal the state an order's run saves when it ends idle. */
  payloadKeys: Keyring;
}

/** Every activity the order workflow calls, under the names the worker registers them by. */
export type OrderActivities = ReturnType<typeof createPaymentActivities> & OrderRefundActivities;

/** What an order's run saves when it ends idle (SPEC §7): its state, and what the row should say. */
export interface SavedOrderState {
  tradeNo: string;
  /** The run's OrderState (order-actor.ts), as the workflow holds it. */
  state: unknown;
  status: OrderStatus;
  refundedAmount: number;
  /**
   * Which decision this is: the saving run (its id and start, epoch ms), its history's length
   * then, and how many saves the run made before. A save older than the one kept is dropped
   * (repository.saveState).
   */
  version: { runId: string; runStartedMs: number; historyLength: number; saveSeq: number };
}

export type LoadedOrderState =
  { found: 'state'; state: unknown } | { found: 'none' } | { found: 'unrestorable'; reason: string };

/** The activities of the order workflow: its channel calls, read-model writes and events. */
export function createPaymentActivities(deps: OrderActivityDeps) {
  const repo = new OrderRepository(deps.db);
  const merchants = new MerchantRepository(deps.db);
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);

  function channel(code: string): Channel {
    const found = deps.channels.get(code);
    if (!found) throw new ChannelError('not_supported', `channel ${code} is not supported`);
    return found;
  }

  const contextOf = (tradeNo: string) => tradeContext(repo, merchants, accounts, tradeNo);

  /** Whom a new payment's channel call acts for, and in what currency. */
  async function createContextOf(input: {
    currency: string;
    channelCode: string;
    subMerchantNo: string | null;
    channelAccountId?: number | null;
  }) {
    return {
      currency: input.currency,
      ...(await accountContextOf(
        {
          appId: '',
          merchantId: null,
          channelCode: input.channelCode,
          subMerchantNo: input.subMerchantNo,
          channelAccountId: input.channelAccountId ?? null,
        },
        merchants,
        accounts,
      )),
    };
  }

  /** The channel's answer to a barcode payment, its failures mapped once (channels/errors.ts). */
  async function payBarcode(input: ChannelBarcode): Promise<BarcodeOutcome> {
    const ctx = await createContextOf(input);
    try {
      const answer = input.contract
        ? await portOf(channel(input.channelCode), 'contracts').deduct(ctx, {
            tradeNo: input.tradeNo,
            amount: input.amount,
            subject: input.subject,
            channelContractId: input.contract.channelContractId,
            callbackUrl: input.callbackUrl,
          })
        : await portOf(channel(input.channelCode), 'barcode').pay(ctx, {
            tradeNo: input.tradeNo,
            amount: input.amount,
            subject: input.subject,
            authCode: input.authCode,
            ...(input.deviceId ? { deviceId: input.deviceId } : {}),
            ...(input.storeId ? { storeId: input.storeId } : {}),
            callbackUrl: input.callbackUrl,
            profitSharing: input.profitSharing,
          });
      if (answer.status === 'paid' && answer.amount !== input.amount) {
        // A payment of another amount is not this order's: unknown, and reversed.
        throw new ChannelError(
          'invalid_response',
          `the channel answered ${input.tradeNo} paid with ${answer.amount}, not ${input.amount}`,
        );
      }
      return answer.status === 'paid'
        ? { outcome: 'paid', channelTradeNo: answer.channelTradeNo, paidAt: answer.paidAt.toISOString() }
        : { outcome: 'paying' };
    } catch (err) {
      const failure = channelFailure(err, 'barcode');
      if (failure.code === 'order_not_paid') return { outcome: 'refused', message: failure.message };
      deps.logger.warn('a barcode payment got no answer from its channel; it will be reversed', {
        trade_no: input.tradeNo,
        error: failure.message,
      });
      return { outcome: 'unknown', message: failure.message };
    }
  }

  async function createAtChannel(input: ChannelCreate): Promise<CreatePaymentResult> {
    try {
      const ctx = await createContextOf(input);
      return await channel(input.channelCode).payments.create(ctx, {
        tradeNo: input.tradeNo,
        amount: input.amount,
        payMethod: input.payMethod as PayMethod,
        subject: input.subject,
        expireAt: new Date(input.expireAt),
        callbackUrl: input.callbackUrl,
        extra: input.extra ?? undefined,
        profitSharing: input.profitSharing,
      });
    } catch (err) {
      throw toActivityFailure(err, 'create');
    }
  }

  /** Follows a return the channel settles later (PROCESSING) within one attempt. */
  async function followReturn(
    sharing: NonNullable<Channel['profitSharing']>,
    ctx: TradeContext,
    ref: { tradeNo: string; shareNo: string; returnNo: string },
    state: ShareReturnState,
  ): Promise<ShareReturnState> {
    let now = state;
    for (let i = 0; now.status === 'processing' && sharing.queryReturn && i < SHARE_FOLLOW_POLLS; i++) {
      await new Promise((r) => setTimeout(r, Math.max(10, SHARE_FOLLOW_GAP_MS * deps.timeScale)));
      const seen = await sharing.queryReturn(ctx, ref);
      if (seen.status !== 'not_found') now = seen;
    }
    if (now.status === 'processing') {
      // The attempt fails; its retry asks again (the return is keyed by its number).
      throw new ChannelError('timeout', `return ${ref.returnNo} is still processing at the channel`);
    }
    return now;
  }

  return {
    /**
     * Creates the order at the channel and records it, in one local activity (SPEC §3.1: one
     * channel call per order). A workflow task that ran it and then timed out runs it again:
     * the order's row, written by that earlier run, answers instead of a second channel call.
     */
    async createOrderAtChannel(input: {
      channel: ChannelCreate;
      order: Omit<NewOrder, 'channelTradeNo' | 'payCredential'>;
    }): Promise<CreatePaymentResult> {
      const earlier = await repo.findOrderByTradeNo(input.channel.tradeNo);
      if (earlier) return { channelTradeNo: earlier.channelTradeNo, payCredential: earlier.payCredential };
      const created = await createAtChannel(input.channel);
      if (await repo.insertOrder({ ...input.order, ...created }))
        deps.metrics.transition('order', NEW_STATUS, 'pending');
      return created;
    },

    /**
     * Records a `checkout` order (SPEC §15), which has no channel until its buyer picks one on
     * the hosted page: its row, with the page as its credential. A repeat finds the row.
     */
    async recordCheckoutOrder(input: { order: Omit<NewOrder, 'channelTradeNo'> }): Promise<void> {
      if (await repo.insertOrder({ ...input.order, channelTradeNo: null }))
        deps.metrics.transition('order', NEW_STATUS, 'pending');
    },

    /**
     * A `checkout` order made at the channel its buyer picked, and its row told so, in one local
     * activity (one channel call per pick). A repeat of it answers from the row once the row
     * says so; before that, the channel is asked again with the same order number and the same
     * fields, which it answers with the order it made.
     */
    async chooseCheckoutChannel(input: {
      channel: ChannelCreate;
      bind: { subMerchantNo: string | null; channelAccountId: number | null; extra: Record<string, string> };
      poll: { gapsMs: number[]; until: string };
    }): Promise<CreatePaymentResult> {
      const { tradeNo, channelCode, payMethod } = input.channel;
      const bound = (o: Order | null) =>
        o?.channelCode === channelCode && o.channelPayMethod === payMethod
          ? { channelTradeNo: o.channelTradeNo, payCredential: o.payCredential }
          : undefined;
      // The row names the channel once, for good: a pick it already holds is answered from it,
      // any other refused (an attempt abandoned by an earlier task may have bound it meanwhile).
      const earlier = await repo.findOrderByTradeNo(tradeNo);
      if (earlier?.channelCode) {
        const same = bound(earlier);
        if (same) return same;
        throw takenFailure(tradeNo, earlier.channelCode);
      }
      const created = await createAtChannel(input.channel);
      const wrote = await repo.bindChannel({
        tradeNo: input.channel.tradeNo,
        channelCode: input.channel.channelCode,
        channelPayMethod: input.channel.payMethod,
        channelTradeNo: created.channelTradeNo,
        payCredential: created.payCredential,
        subMerchantNo: input.bind.subMerchantNo,
        channelAccountId: input.bind.channelAccountId,
        extra: input.bind.extra,
        poll: input.poll,
      });
      if (wrote) return created;
      const now = await repo.findOrderByTradeNo(tradeNo);
      if (bound(now)) return created;
      throw takenFailure(tradeNo, now?.channelCode ?? null);
    },

    /**
     * Records a barcode order and takes its payment at the channel, in one local activity
     * (SPEC §14: one channel call per order), asked at most once. The row comes first: a
     * workflow task that ran this and then was lost (its worker died) runs it again and finds
     * the row. It answers from what the lost task recorded there (paid, or the code refused:
     * the lost task's later local writes reached the row), and otherwise `unknown`, never asking
     * the channel a second time: the payment is reversed rather than charged twice (a reverse of
     * a payment the channel never saw reverses nothing).
     */
    async payBarcodeAtChannel(input: {
      channel: ChannelBarcode;
      order: Omit<NewOrder, 'channelTradeNo' | 'payCredential' | 'poll'>;
    }): Promise<BarcodeOutcome> {
      const inserted = await repo.insertOrder({ ...input.order, channelTradeNo: null, payCredential: {} });
      if (!inserted) {
        const earlier = await repo.findOrderByTradeNo(input.channel.tradeNo);
        if (earlier && isPaidStatus(earlier.status)) {
          return {
            outcome: 'paid',
            channelTradeNo: earlier.channelTradeNo ?? '',
            paidAt: (earlier.payTime ?? earlier.updatedAt).toISOString(),
          };
        }
        if (earlier?.status === 'closed' && earlier.closeReason === 'refused') {
          return { outcome: 'refused', message: 'the channel refused the code' };
        }
        return {
          outcome: 'unknown',
          message: 'the payment was asked before; whether it was taken is not known',
        };
      }
      deps.metrics.transition('order', NEW_STATUS, 'pending');
      return payBarcode(input.channel);
    },

    /**
     * Where a barcode payment stands at the channel, asked once: null when the channel did not
     * answer (the workflow asks again on its own backoff, and reverses it when its wait ends).
     */
    async queryBarcodePayment(input: { channelCode: string; tradeNo: string }): Promise<PaymentState | null> {
      try {
        return await channel(input.channelCode).payments.query(await contextOf(input.tradeNo), input.tradeNo);
      } catch (err) {
        deps.logger.warn('a barcode payment could not be queried; asked again later', {
          trade_no: input.tradeNo,
          error: channelFailure(err, 'query').message,
        });
        return null;
      }
    },

    /**
     * Asks the channel to reverse a barcode payment (SPEC §14), once: the workflow asks again
     * on its own backoff for as long as the channel does not answer or asks to be asked again.
     */
    async reverseBarcodePayment(input: {
      channelCode: string;
      tradeNo: string;
      /** A contract's deduction: reversed through the channel's contracts. */
      contract?: true;
    }): Promise<ReverseOutcome> {
      try {
        const port = portOf(channel(input.channelCode), input.contract ? 'contracts' : 'barcode');
        const answer = await port.reverse(await contextOf(input.tradeNo), input.tradeNo);
        return answer.status === 'reversed'
          ? {
              outcome: 'reversed',
              ...(answer.refunded === undefined ? {} : { refunded: answer.refunded }),
              ...(answer.unseen ? { unseen: true } : {}),
            }
          : { outcome: 'retry', message: answer.reason };
      } catch (err) {
        const failure = channelFailure(err, 'reverse');
        if (failure.code === 'order_already_paid') return { outcome: 'refused', message: failure.message };
        return { outcome: 'unknown', message: failure.message };
      }
    },

    async closeChannelPayment(input: { channelCode: string; tradeNo: string }): Promise<PaymentState> {
      try {
        const payments = channel(input.channelCode).payments;
        return await payments.close(await contextOf(input.tradeNo), input.tradeNo);
      } catch (err) {
        throw toActivityFailure(err, 'close');
      }
    },

    async shareProfit(input: {
      channelCode: string;
      tradeNo: string;
      receivers: { type: string; account: string; name?: string; amount: number }[];
    }): Promise<'finished' | 'failed'> {
      try {
        const sharing = portOf(channel(input.channelCode), 'profitSharing');
        const ctx = await contextOf(input.tradeNo);
        if (sharing.registerReceivers) {
          await sharing.registerReceivers(
            ctx,
            input.receivers.map(({ type, account, name }) => ({ type, account, ...(name ? { name } : {}) })),
          );
        }
        const ref = { tradeNo: input.tradeNo, shareNo: `S${input.tradeNo.slice(1)}` };
        // A retried attempt finds the sharing an earlier one started, rather than asking twice.
        const earlier = sharing.query ? await sharing.query(ctx, ref) : { status: 'not_found' as const };
        let state =
          earlier.status === 'not_found'
            ? await sharing.share(ctx, { ...ref, receivers: input.receivers })
            : earlier;
        // A channel that settles later (WeChat Pay: PROCESSING) is followed for a while; past
        // that the attempt fails and its retry looks again.
        for (let i = 0; state.status === 'processing' && sharing.query && i < SHARE_FOLLOW_POLLS; i++) {
          await new Promise((r) => setTimeout(r, Math.max(10, SHARE_FOLLOW_GAP_MS * deps.timeScale)));
          const now = await sharing.query(ctx, ref);
          if (now.status !== 'not_found') state = now;
        }
        if (state.status === 'processing' && sharing.query) {
          throw new ChannelError(
            'timeout',
            `profit sharing of ${input.tradeNo} is still processing at the channel`,
          );
        }
        if (state.status === 'failed') {
          deps.logger.warn('profit sharing failed at the channel', {
            trade_no: input.tradeNo,
            reason: state.reason,
          });
          return 'failed';
        }
        return 'finished';
      } catch (err) {
        throw toActivityFailure(err, 'profit_share');
      }
    },

    /**
     * Releases to the merchant what the payment froze for sharing, when nothing will be shared
     * (SPEC §3.7). A channel that freezes nothing has nothing to release: done.
     */
    async unfreezeProfitShare(input: {
      channelCode: string;
      tradeNo: string;
      unfreezeNo: string;
    }): Promise<{ status: 'finished' | 'failed' | 'processing' | 'not_needed'; reason?: string }> {
      try {
        const sharing = portOf(channel(input.channelCode), 'profitSharing');
        if (!sharing.unfreeze) return { status: 'not_needed' };
        const state = await sharing.unfreeze(await contextOf(input.tradeNo), {
          tradeNo: input.tradeNo,
          unfreezeNo: input.unfreezeNo,
          description: `nothing shared of ${input.tradeNo}: refunded before the share was due`,
        });
        return state.status === 'failed' ? { status: 'failed', reason: state.reason } : state;
      } catch (err) {
        throw toActivityFailure(err, 'profit_share');
      }
    },

    /**
     * Where a share, an unfreeze or a return the channel did not settle in time stands now: one
     * question, asked again by the order on its backoff. A channel that cannot be asked about
     * that kind of step answers `processing`, and the order leaves it to an operator in the end.
     */
    async queryShareStep(input: {
      channelCode: string;
      tradeNo: string;
      kind: 'share' | 'unfreeze' | 'return';
      no: string;
    }): Promise<
      | { status: 'processing' | 'not_found'; reason?: string }
      | { status: 'finished'; channelNo?: string | null }
      | { status: 'failed'; reason: string }
    > {
      try {
        const sharing = portOf(channel(input.channelCode), 'profitSharing');
        const ctx = await contextOf(input.tradeNo);
        if (input.kind === 'return') {
          if (!sharing.queryReturn) return { status: 'processing' };
          const shareNo = `S${input.tradeNo.slice(1)}`;
          const st = await sharing.queryReturn(ctx, { tradeNo: input.tradeNo, shareNo, returnNo: input.no });
          return st.status === 'success' ? { status: 'finished', channelNo: st.channelReturnNo } : st;
        }
        // WeChat Pay keeps an unfreeze as a sharing order of its own number.
        if (!sharing.query) return { status: 'processing' };
        return await sharing.query(ctx, { tradeNo: input.tradeNo, shareNo: input.no });
      } catch (err) {
        throw toActivityFailure(err, 'profit_share');
      }
    },

    /**
     * Takes part of the order's share back from one receiver before a refund (SPEC §3.7),
     * keyed by the return's number: a retried attempt finds the return its first made.
     * Answers only a final state; a refusal is `failed` with the channel's reason.
     */
    async returnProfitShare(input: {
      channelCode: string;
      tradeNo: string;
      returnNo: string;
      receiver: ProfitShareReceiver;
      amount: number;
      refundNo: string;
      /** The refund's reason, carried into the return's description (absent in older runs). */
      reason?: string | null;
    }): Promise<
      { status: 'success'; channelReturnNo: string | null } | { status: 'failed'; reason: string }
    > {
      const sharing = portOf(channel(input.channelCode), 'profitSharing');
      if (!sharing.returnShare) {
        return { status: 'failed', reason: `channel ${input.channelCode} cannot take a share back` };
      }
      const ctx = await contextOf(input.tradeNo);
      const ref = { tradeNo: input.tradeNo, shareNo: `S${input.tradeNo.slice(1)}`, returnNo: input.returnNo };
      try {
        const earlier = sharing.queryReturn
          ? await sharing.queryReturn(ctx, ref)
          : { status: 'not_found' as const };
        const state =
          earlier.status === 'not_found'
            ? await sharing.returnShare(ctx, {
                ...ref,
                receiver: input.receiver,
                amount: input.amount,
                // WeChat Pay takes at most 80 characters of description.
                description:
                  `returned for refund ${input.refundNo}${input.reason ? `: ${input.reason}` : ''}`.slice(
                    0,
                    80,
                  ),
              })
            : earlier;
        const final = await followReturn(sharing, ctx, ref, state);
        if (final.status === 'processing') throw new ChannelError('timeout', 'return still processing');
        return final;
      } catch (err) {
        if (err instanceof ChannelError && (err.kind === 'refused' || err.kind === 'not_supported')) {
          return { status: 'failed', reason: err.message };
        }
        throw toActivityFailure(err, 'profit_share');
      }
    },

    /** Records a share, unfreeze or return the order asked of its channel, and the order's totals. */
    async recordShareStep(input: {
      tradeNo: string;
      step: ShareStep;
      order: { status: ProfitSharingStatus; sharedAmount: number; returnedAmount: number };
    }): Promise<void> {
      await repo.recordShareStep(input.tradeNo, input.step, input.order);
    },

    // Each record counts the status change only when its write made it, so a retried activity
    // or a second path to the same state is not counted twice.
    async recordOrderPaid(input: {
      tradeNo: string;
      channelTradeNo: string | null;
      payTime: string;
    }): Promise<void> {
      const from = await repo.markPaid(input.tradeNo, input.channelTradeNo, input.payTime);
      if (from) deps.metrics.transition('order', from, 'paid');
    },

    async recordOrderClosed(input: {
      tradeNo: string;
      closedAt: string;
      /** A barcode order's (SPEC §14): the channel refused its code, or it was reversed. */
      closeReason?: CloseReason;
    }): Promise<void> {
      if (await repo.markClosed(input.tradeNo, input.closedAt, input.closeReason ?? null))
        deps.metrics.transition('order', 'pending', 'closed');
    },

    async recordOrderRefundTotals(input: {
      tradeNo: string;
      refundedAmount: number;
      status: OrderStatus;
      /** What the order's profit share stands at, when refunds moved it (returns with the refund). */
      sharing?: { status: ProfitSharingStatus; returnedAmount: number };
    }): Promise<void> {
      const from = await repo.setRefundTotals(
        input.tradeNo,
        input.refundedAmount,
        input.status,
        input.sharing,
      );
      if (from && from !== input.status) deps.metrics.transition('order', from, input.status);
    },

    async recordProfitSharing(input: {
      tradeNo: string;
      status: ProfitSharingStatus;
      /** What the share gave its receivers (SPEC §3.7 profit_shared_amount); unchanged when absent. */
      sharedAmount?: number;
    }): Promise<void> {
      await repo.setProfitSharingStatus(input.tradeNo, input.status, input.sharedAmount);
    },

    /**
     * Keeps the state the order's run decided with, for the run that reopens it (SPEC §7):
     * sealed with the payload keys and bound to the order, beside the status and refunded
     * amount it says, which the reopening run's load checks against the read model.
     */
    async saveOrderState(input: SavedOrderState): Promise<void> {
      const { version, ...saved } = input;
      const written = await repo.saveState(
        input.tradeNo,
        sealSavedState(deps.payloadKeys, input.tradeNo, saved),
        {
          runId: version.runId,
          runStartedAt: new Date(version.runStartedMs),
          historyLength: version.historyLength,
          saveSeq: version.saveSeq,
        },
      );
      if (!written) {
        deps.logger.warn('a save of an order state older than the one kept was dropped', {
          trade_no: input.tradeNo,
          run_id: version.runId,
          history_length: version.historyLength,
        });
      }
    },

    /** The state the order's last run saved, if it is still the read model's (saveOrderState). */
    async loadOrderState(input: { tradeNo: string }): Promise<LoadedOrderState> {
      const row = await repo.savedState(input.tradeNo);
      if (!row) return { found: 'none' };
      let saved: SavedOrderState;
      try {
        saved = openSavedState<SavedOrderState>(deps.payloadKeys, input.tradeNo, row.sealed);
      } catch (err) {
        return { found: 'unrestorable', reason: `its saved state does not open (${(err as Error).name})` };
      }
      if (saved.status !== row.status || saved.refundedAmount !== row.refundedAmount) {
        return {
          found: 'unrestorable',
          reason:
            `its saved state says ${saved.status} with ${saved.refundedAmount} refunded, the order's row ` +
            `${row.status} with ${row.refundedAmount}: its last run ended without saving its last changes`,
        };
      }
      return { found: 'state', state: saved.state };
    },

    /** Publishes an order event with the order as the query endpoint shows it. */
    async notifyOrderEvent(input: { tradeNo: string; type: NotificationEvent }): Promise<string | null> {
      const order = await repo.findOrderByTradeNo(input.tradeNo);
      if (!order) return null;
      return deps.publisher.publish({
        appId: order.appId,
        type: input.type,
        eventKey: `${input.type}:${order.tradeNo}`,
        url: order.notifyUrl,
        data: orderView(order),
        occurredAt: new Date().toISOString(),
        tradeNo: order.tradeNo,
      });
    },
  };
}
