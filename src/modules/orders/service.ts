// Longer than 400 lines: the one class that starts, updates and signals order workflows (SPEC
// §3.1–3.4, §7), each with the read-model checks it makes before it reaches the workflow.
import { createHash } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { CallbacksPort, CallbackSubject, ChannelEvent } from '../../channels/ports';
import { channelOfAuthCode, type ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import { scaleDuration } from '../../platform/durations';
import { AppError } from '../../platform/errors';
import { generateServiceNo } from '../../platform/ids';
import { qrImage } from '../../platform/qr';
import type { Logger } from '../../platform/logger';
import { deliverUpdate } from '../../platform/temporal-updates';
import { ORDER_WORKFLOW_TASK_TIMEOUT, searchAttributes } from '../../platform/workflow/definitions';
import { ChannelAccountRepository, DEFAULT_MAX_SHARING_RATIO, MerchantRepository } from '../merchants';
import type { orderWorkflow } from './workflow';
import {
  ORDER_RUN_ENDED,
  chooseChannelUpdate,
  closeOrderUpdate,
  createOrderUpdate,
  orderWorkflowId,
  paymentSignal,
  refundOrderUpdate,
  type CreateOrderRequest,
  type BarcodeTimings,
  type ChooseChannelRequest,
  type CreateOrderResult,
  type OrderInput,
  type PaymentSignal,
  type RefundRequest,
  type RefundResult,
} from './messages';
import { accountContextOf } from './activities';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Order } from './model';
import { failureType } from '../../platform/temporal-failures';
import { toAppError } from './outcomes';
import { OrderRepository } from './repository';
import {
  callbackEventRefusal,
  callbackOrderRefusal,
  channelRefusal,
  closeDecision,
  DEFAULT_EXPIRE_MINUTES,
  merchantAccountRefusal,
  sharingAmountRefusal,
  sharingRefusal,
  type CallbackRefusal,
  LATE_PAYMENT_WINDOW_MS,
  RETURN_ASK_FOR_MS,
  PAYMENT_POLL_SCHEDULE_MS,
  REFUND_POLL_WINDOW_MS,
  repeatCreateRefusal,
  BARCODE_ANSWER_MS,
  BARCODE_IN_FLIGHT_MS,
  BARCODE_POLL_GAPS_MS,
  BARCODE_REVERSE_GAPS_MS,
  BARCODE_WAIT_MS,
  barcodeRepeat,
  CHECKOUT_PAY_METHOD,
  CONTRACT_PAY_METHOD,
  DEDUCTION_WAIT_MS,
  type Refusal,
} from './rules';

export interface OrderServiceDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  timeScale: number;
  channels: ChannelRegistry;
  /** How channels reach this service (their callbacks). */
  publicBaseUrl: string;
  defaultChannel: string;
  profitShareDelayMs: number;
  /** How long a paid order with nothing left to wait for keeps its workflow run, unscaled (SPEC §7). */
  orderIdleEndMs: number;
  /**
   * How long a barcode payment the buyer is confirming is followed before it is reversed,
   * unscaled (SPEC §14, 60 s); its queries' and reverses' backoff keeps its proportion to it.
   */
  barcodeWaitMs?: number;
  /** How long after a barcode payment's ask a reverse that finds nothing is asked again (BARCODE_IN_FLIGHT_MS), unscaled. */
  barcodeInFlightMs?: number;
  /** The deadline of work done inside one request (workflow updates that call a channel). */
  requestTimeoutMs: number;
  /** Open the Alipay tokens of merchants' channel accounts (SPEC §5.8). */
  payloadKeys: Keyring;
  /** The hosted page of a `checkout` order (SPEC §15); without it such orders are refused. */
  checkoutUrl?: (tradeNo: string) => string;
}

/** POST /api/v1/pay/unified-order's fields, validated. */
export interface CreateOrderBody {
  merchant_order_no: string;
  pay_method: string;
  amount: number;
  subject: string;
  notify_url: string;
  channel_code?: string;
  expire_minutes?: number;
  profit_sharing_amount?: number;
  merchant_id?: string;
  extra?: Record<string, unknown>;
  /** `pay_method: barcode` (SPEC §14): the buyer's code, the till and the shop. */
  auth_code?: string;
  device_id?: string;
  store_id?: string;
  /** Not a field of the API: the hosted checkout's order for a payment link (SPEC §15). */
  payment_link_id?: string;
  /** Nor these: the hosted checkout's order at a merchant's standing code, and its buyer's note. */
  standing_code_id?: string;
  buyer_note?: string;
  /** Nor this: a recurring contract's deduction (`pay_method: contract`, SPEC §17), made by the contract. */
  contract?: {
    contractNo: string;
    channelContractId: string;
    /** The account the contract was signed under, which its deductions are made with. */
    subMerchantNo: string | null;
    channelAccountId: number | null;
  };
}

/** How a callback names its order: by durapay's trade number or by the channel's. */
export type OrderCallbackSubject = Exclude<CallbackSubject, { kind: 'refund_no' } | { kind: 'transfer_no' }>;

/** A channel event about an order: a payment or a refund (a transfer's belongs to no order). */
export type OrderEvent = Exclude<ChannelEvent, { kind: 'transfer' }>;

const refused = (r: Refusal) => new AppError(r.code, r.message);

/**
 * A barcode create's code (SPEC §14): its hash, and the channel its prefix picks. The barcode
 * fields belong to `pay_method: barcode` only, and it needs its `auth_code`; a code no channel
 * claims is refused when the create names no channel.
 */
function barcodeOf(body: CreateOrderBody):
  | {
      authCode: string;
      authCodeSha256: string;
      channelCode: string | undefined;
      contract?: NonNullable<CreateOrderBody['contract']>;
    }
  | undefined {
  if (body.pay_method === CONTRACT_PAY_METHOD) {
    // Only a contract makes its deductions; an app's create naming the method is refused as any
    // method its channel does not list is (channelRefusal).
    if (!body.contract) return undefined;
    return {
      authCode: '',
      authCodeSha256: createHash('sha256')
        .update(`contract:${body.contract.channelContractId}`)
        .digest('hex'),
      channelCode: body.channel_code,
      contract: body.contract,
    };
  }
  if (body.pay_method !== 'barcode') {
    for (const field of ['auth_code', 'device_id', 'store_id'] as const) {
      if (body[field] !== undefined)
        throw new AppError('invalid_param', `"${field}" is for pay_method barcode only`);
    }
    return undefined;
  }
  if (body.auth_code === undefined)
    throw new AppError('invalid_param', '"auth_code" is required for pay_method barcode');
  const channelCode = channelOfAuthCode(body.auth_code);
  if (body.channel_code === undefined && channelCode === undefined)
    throw new AppError('invalid_param', '"auth_code" is not a buyer code of any channel durapay takes');
  return {
    authCode: body.auth_code,
    authCodeSha256: createHash('sha256').update(body.auth_code).digest('hex'),
    channelCode,
  };
}

/**
 * `pay_method: checkout` (SPEC §15): its buyer picks the channel on the hosted page, so the
 * create names none, and the share and the barcode's fields do not apply.
 */
function checkoutOf(body: CreateOrderBody): boolean {
  if (body.pay_method !== CHECKOUT_PAY_METHOD) return false;
  if (body.channel_code !== undefined)
    throw new AppError(
      'invalid_param',
      '"channel_code" is not for pay_method checkout: the buyer picks the channel',
    );
  if ((body.profit_sharing_amount ?? 0) > 0)
    throw new AppError('invalid_param', '"profit_sharing_amount" is not for pay_method checkout');
  return true;
}

/** A checkout order's currency: every channel durapay takes through the page is paid in it. */
const CHECKOUT_CURRENCY = 'CNY';

/** The workflow of an order as recorded. */
export const orderWorkflowIdOf = (order: Order) => orderWorkflowId(order.appId, order.merchantOrderNo);

/**
 * The orders capability (SPEC §3.1–3.4): the only code that starts, updates or signals order
 * workflows. It answers from the read model what the read model can decide, with the same rules
 * the workflow applies, and sends the rest to the order's workflow.
 */
export class OrderService {
  readonly repository: OrderRepository;
  private readonly merchants: MerchantRepository;
  private readonly accounts: ChannelAccountRepository;

  constructor(private readonly deps: OrderServiceDeps) {
    this.repository = new OrderRepository(deps.db);
    this.merchants = new MerchantRepository(deps.db);
    this.accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  }

  private scale(ms: number): number {
    return scaleDuration(ms, this.deps.timeScale);
  }

  private delivery(log: Logger, workflowId?: string) {
    return {
      client: this.deps.client,
      deadline: Date.now() + this.deps.requestTimeoutMs,
      log,
      workflowId,
    };
  }

  /** How long and how often a refund of an order is followed at its channel (SPEC §3.5). */
  refundFollowTimings(): { pollGapsMs: number[]; pollForMs: number } {
    return {
      pollGapsMs: PAYMENT_POLL_SCHEDULE_MS.map((ms) => this.scale(ms)),
      pollForMs: this.scale(REFUND_POLL_WINDOW_MS),
    };
  }

  /** The durations an order's run waits, scaled. */
  private timings(expireMinutes: number, barcode = false, deduction = false): OrderInput['timings'] {
    return {
      ...(barcode ? { barcode: this.barcodeTimings(deduction) } : {}),
      pollGapsMs: PAYMENT_POLL_SCHEDULE_MS.map((ms) => this.scale(ms)),
      expireAfterMs: this.scale(expireMinutes * 60_000),
      profitShareDelayMs: this.scale(this.deps.profitShareDelayMs),
      refundPollGapsMs: this.refundFollowTimings().pollGapsMs,
      refundPollForMs: this.refundFollowTimings().pollForMs,
      latePaymentWindowMs: this.scale(LATE_PAYMENT_WINDOW_MS),
      returnAskForMs: this.scale(RETURN_ASK_FOR_MS),
      idleEndMs: this.scale(this.deps.orderIdleEndMs),
    };
  }

  /**
   * How a barcode order is followed (SPEC §14): its wait, and its queries' and reverses' backoff
   * in proportion to it; the till's answer time is production's whatever the scale.
   */
  private barcodeTimings(deduction = false): BarcodeTimings {
    // A deduction the channel is still taking is followed longer than a buyer at a till.
    const waitMs = deduction ? DEDUCTION_WAIT_MS : (this.deps.barcodeWaitMs ?? BARCODE_WAIT_MS);
    const scaled = this.scale(waitMs);
    const inProportion = (gaps: number[]) =>
      gaps.map((ms) => Math.max(1, Math.round((ms * scaled) / BARCODE_WAIT_MS)));
    return {
      waitMs: scaled,
      answerMs: BARCODE_ANSWER_MS,
      pollGapsMs: inProportion(BARCODE_POLL_GAPS_MS),
      reverseGapsMs: inProportion(BARCODE_REVERSE_GAPS_MS),
      inFlightMs: this.deps.barcodeInFlightMs ?? BARCODE_IN_FLIGHT_MS,
    };
  }

  /**
   * A new run of an order whose last run has ended (SPEC §7), or its open run: the run loads the
   * order's state from the database before it takes the request sent with it.
   */
  private reopening(order: Order): WithStartWorkflowOperation<typeof orderWorkflow> {
    const input: OrderInput = {
      appId: order.appId,
      merchantOrderNo: order.merchantOrderNo,
      tradeNo: order.tradeNo,
      channelCode: order.channelCode ?? '',
      currency: order.currency,
      callbackUrl: order.channelCode
        ? `${this.deps.publicBaseUrl}/api/v1/notify/payment/${order.channelCode}`
        : '',
      createdAt: order.createdAt.toISOString(),
      timings: this.timings(
        Math.max(1, Math.round((order.expireTime.getTime() - order.createdAt.getTime()) / 60_000)),
        order.payMethod === 'barcode' || order.payMethod === CONTRACT_PAY_METHOD,
        order.payMethod === CONTRACT_PAY_METHOD,
      ),
      resume: true,
    };
    return new WithStartWorkflowOperation('orderWorkflow', {
      workflowId: orderWorkflowIdOf(order),
      taskQueue: this.deps.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowTaskTimeout: ORDER_WORKFLOW_TASK_TIMEOUT,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: searchAttributes.AppId, value: order.appId },
        { key: searchAttributes.MerchantOrderNo, value: order.merchantOrderNo },
        ...(order.channelCode ? [{ key: searchAttributes.ChannelCode, value: order.channelCode }] : []),
        { key: searchAttributes.TradeNo, value: order.tradeNo },
        { key: searchAttributes.BizStatus, value: order.status },
        ...(order.merchantId ? [{ key: searchAttributes.MerchantId, value: order.merchantId }] : []),
      ]),
    });
  }

  /** The app's order, or 422 order_not_found. */
  async find(appId: string, tradeNo: string): Promise<Order> {
    const order = await this.repository.findOrder(appId, tradeNo);
    if (!order) throw new AppError('order_not_found', 'order not found');
    return order;
  }

  async create(appId: string, body: CreateOrderBody, log: Logger): Promise<CreateOrderResult> {
    const { deps } = this;
    const barcode = barcodeOf(body);
    const checkout = checkoutOf(body);
    // A checkout order's channel is its buyer's pick on the hosted page (SPEC §15): none yet.
    const channelCode = checkout ? '' : (body.channel_code ?? barcode?.channelCode ?? deps.defaultChannel);
    // A repeat of an order already recorded is answered by what it is (SPEC §3.1), before the
    // channel is consulted: changed parameters, or an order that has ended (its workflow is
    // gone). A pending one goes on to its workflow, which applies the same rule again.
    const existing = await this.repository.findOrderByMerchantOrderNo(appId, body.merchant_order_no);
    if (existing) {
      const known = {
        identity: {
          amount: Number(existing.amount),
          payMethod: existing.payMethod,
          channelCode: existing.payMethod === CHECKOUT_PAY_METHOD ? '' : (existing.channelCode ?? ''),
          merchantId: existing.merchantId,
          profitSharingAmount: Number(existing.profitSharingAmount),
          ...(existing.authCodeSha256 ? { authCodeSha256: existing.authCodeSha256 } : {}),
        },
        status: existing.status,
      };
      const asked = {
        amount: body.amount,
        payMethod: body.pay_method,
        channelCode,
        merchantId: body.merchant_id ?? null,
        profitSharingAmount: body.profit_sharing_amount ?? 0,
        ...(barcode ? { authCodeSha256: barcode.authCodeSha256 } : {}),
      };
      if (existing.payMethod === 'barcode' || existing.payMethod === CONTRACT_PAY_METHOD) {
        // A barcode order asked again (SPEC §14): the same code joins it, another is refused.
        const answer = barcodeRepeat({ ...known, closeReason: existing.closeReason }, asked);
        if (typeof answer !== 'string') throw refused(answer);
        if (answer === 'paid')
          return { trade_no: existing.tradeNo, pay_credential: {}, is_idempotent: true, status: 'paid' };
      } else {
        const refusal = repeatCreateRefusal(known, asked);
        if (refusal) throw refused(refusal);
      }
    }

    if (checkout) return this.createCheckout(appId, body, log);

    const offered = deps.channels.get(channelCode);
    const asked = { payMethod: body.pay_method, amount: body.amount };
    // A contract's deduction is offered by the channels that take contracts (SPEC §17).
    const limits =
      offered && barcode?.contract
        ? { ...offered.capabilities, payMethods: offered.contracts ? [CONTRACT_PAY_METHOD] : [] }
        : offered?.capabilities;
    const channelRefused = channelRefusal(channelCode, limits, asked);
    if (channelRefused) throw refused(channelRefused);
    // channelRefusal refuses a channel durapay does not have.
    const channel = offered!;
    const sharing = body.profit_sharing_amount ?? 0;
    const sharingRefused = sharingAmountRefusal(sharing, body.amount);
    if (sharingRefused) throw refused(sharingRefused);
    // Profit sharing reads the merchant's configuration (SPEC §3.1, in this order).
    const merchant =
      body.merchant_id === undefined ? undefined : await this.merchants.find(appId, body.merchant_id);
    if (body.merchant_id !== undefined && !merchant)
      throw new AppError('order_not_found', 'merchant not found');
    const receivers = merchant?.profitSharing?.receivers ?? [];
    const shareRefused = sharingRefusal({
      sharing,
      amount: body.amount,
      receivers: receivers.length,
      maxRatio: merchant?.profitSharing?.max_ratio ?? DEFAULT_MAX_SHARING_RATIO,
      channelCode,
      channelShares: channel.profitSharing !== undefined,
    });
    if (shareRefused) throw refused(shareRefused);
    // The merchant's account at this channel (SPEC §5.8), kept with the order. A repeat of an
    // order already made keeps the account it was made with, detached since or not: its answer
    // is the order's (SPEC §3.1), not a refusal.
    // A contract's deduction is made under the account the contract was signed with.
    const signedUnder = barcode?.contract
      ? { accountNo: barcode.contract.subMerchantNo, id: barcode.contract.channelAccountId }
      : null;
    const made = existing?.merchantId ? existing : null;
    const account =
      merchant && !made && !signedUnder
        ? await this.accounts.attachedAt(appId, merchant.merchantId, channelCode)
        : null;
    if (merchant && !made && !signedUnder) {
      const accountRefused = merchantAccountRefusal(merchant.merchantId, channelCode, account);
      if (accountRefused) throw refused(accountRefused);
    }

    const request: CreateOrderRequest = {
      payMethod: body.pay_method,
      amount: body.amount,
      subject: body.subject,
      notifyUrl: body.notify_url,
      // A barcode order is decided within its wait (SPEC §14): expire_minutes does not apply.
      expireMinutes: barcode ? 1 : (body.expire_minutes ?? DEFAULT_EXPIRE_MINUTES),
      profitSharingAmount: sharing,
      merchantId: body.merchant_id ?? null,
      subMerchantNo: made ? made.subMerchantNo : (signedUnder?.accountNo ?? account?.accountNo ?? null),
      channelAccountId: made
        ? made.channelAccountId === null
          ? null
          : Number(made.channelAccountId)
        : (signedUnder?.id ?? account?.id ?? null),
      // Whether the channel can take each receiver's share back for a refund (SPEC §3.7).
      receivers:
        sharing > 0
          ? receivers.map((r) => ({
              ...r,
              returnable: channel.profitSharing?.returns
                ? (channel.profitSharing.returnable?.(r) ?? true)
                : false,
            }))
          : [],
      ...(sharing > 0 && channel.profitSharing?.returns
        ? { shareReturns: channel.profitSharing.returns }
        : {}),
      extra: body.extra ?? null,
      ...(body.payment_link_id ? { paymentLinkId: body.payment_link_id } : {}),
      ...(body.standing_code_id ? { standingCodeId: body.standing_code_id } : {}),
      ...(body.buyer_note ? { buyerNote: body.buyer_note } : {}),
      ...(barcode
        ? {
            barcode: {
              authCode: barcode.authCode,
              authCodeSha256: barcode.authCodeSha256,
              deviceId: body.device_id ?? null,
              storeId: body.store_id ?? null,
              ...(barcode.contract
                ? {
                    contract: {
                      contractNo: barcode.contract.contractNo,
                      channelContractId: barcode.contract.channelContractId,
                    },
                  }
                : {}),
            },
          }
        : {}),
    };

    const now = new Date();
    const input: OrderInput = {
      appId,
      merchantOrderNo: body.merchant_order_no,
      tradeNo: generateServiceNo('P', now),
      channelCode,
      currency: channel.capabilities.currency,
      callbackUrl: `${deps.publicBaseUrl}/api/v1/notify/payment/${channelCode}`,
      createdAt: now.toISOString(),
      timings: this.timings(request.expireMinutes, barcode !== undefined, barcode?.contract !== undefined),
    };
    return this.start(input, request, log);
  }

  /** Starts the order's workflow with its create, or sends the create to the open run. */
  private async start(
    input: OrderInput,
    request: CreateOrderRequest,
    log: Logger,
  ): Promise<CreateOrderResult> {
    const { deps } = this;
    const startWorkflowOperation = () =>
      new WithStartWorkflowOperation<typeof orderWorkflow>('orderWorkflow', {
        workflowId: orderWorkflowId(input.appId, input.merchantOrderNo),
        taskQueue: deps.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        // Covers the create's local activity with a margin (definitions.ts).
        workflowTaskTimeout: ORDER_WORKFLOW_TASK_TIMEOUT,
        typedSearchAttributes: new TypedSearchAttributes([
          { key: searchAttributes.AppId, value: input.appId },
          { key: searchAttributes.MerchantOrderNo, value: input.merchantOrderNo },
          // A checkout order's channel is set when its buyer picks one.
          ...(input.channelCode ? [{ key: searchAttributes.ChannelCode, value: input.channelCode }] : []),
          { key: searchAttributes.BizStatus, value: 'creating' },
        ]),
      });
    try {
      return await deliverUpdate(
        () =>
          deps.client.workflow.executeUpdateWithStart(createOrderUpdate, {
            args: [request],
            // An operation is used once; a retry needs a fresh one.
            startWorkflowOperation: startWorkflowOperation(),
          }),
        this.delivery(log),
      );
    } catch (err) {
      throw toAppError(err, 'create');
    }
  }

  /**
   * `pay_method: checkout` (SPEC §15): an order with no channel yet, its credential the hosted
   * page where its buyer picks one (chooseChannel), and the same page as a QR image.
   */
  private async createCheckout(
    appId: string,
    body: CreateOrderBody,
    log: Logger,
  ): Promise<CreateOrderResult> {
    const { deps } = this;
    if (!deps.checkoutUrl) throw new AppError('invalid_pay_method', 'pay_method checkout is not served here');
    if (body.merchant_id !== undefined && !(await this.merchants.find(appId, body.merchant_id)))
      throw new AppError('order_not_found', 'merchant not found');
    const now = new Date();
    const tradeNo = generateServiceNo('P', now);
    const request: CreateOrderRequest = {
      payMethod: CHECKOUT_PAY_METHOD,
      amount: body.amount,
      subject: body.subject,
      notifyUrl: body.notify_url,
      expireMinutes: body.expire_minutes ?? DEFAULT_EXPIRE_MINUTES,
      profitSharingAmount: 0,
      merchantId: body.merchant_id ?? null,
      subMerchantNo: null,
      channelAccountId: null,
      receivers: [],
      extra: body.extra ?? null,
      checkoutUrl: deps.checkoutUrl(tradeNo),
    };
    const input: OrderInput = {
      appId,
      merchantOrderNo: body.merchant_order_no,
      tradeNo,
      channelCode: '',
      currency: CHECKOUT_CURRENCY,
      callbackUrl: '',
      createdAt: now.toISOString(),
      timings: this.timings(request.expireMinutes),
    };
    const created = await this.start(input, request, log);
    const url = created.pay_credential.checkout_url;
    if (typeof url !== 'string') return created;
    return { ...created, pay_credential: { checkout_url: url, qr_code: await qrImage(url) } };
  }

  /**
   * A `checkout` order's buyer picked a channel on the hosted page (SPEC §15): the order is made
   * there, by its workflow, once. The caller (the checkout) has chosen among the channels the
   * order's merchant can take money at; the channel's own limits are checked here.
   */
  async chooseChannel(
    order: Order,
    pick: { channelCode: string; payMethod: 'jsapi' | 'h5'; extra: Record<string, string>; payer?: string },
    log: Logger,
  ): Promise<CreateOrderResult> {
    const channel = this.deps.channels.get(pick.channelCode);
    const refusal = channelRefusal(pick.channelCode, channel?.capabilities, {
      payMethod: pick.payMethod,
      amount: Number(order.amount),
    });
    if (refusal) throw refused(refusal);
    if (channel!.capabilities.currency !== order.currency)
      throw new AppError('channel_not_support', `channel ${pick.channelCode} takes no ${order.currency}`);
    const account = order.merchantId
      ? await this.accounts.attachedAt(order.appId, order.merchantId, pick.channelCode)
      : null;
    if (order.merchantId) {
      const accountRefused = merchantAccountRefusal(order.merchantId, pick.channelCode, account);
      if (accountRefused) throw refused(accountRefused);
    }
    const request: ChooseChannelRequest = {
      channelCode: pick.channelCode,
      payMethod: pick.payMethod,
      currency: order.currency,
      callbackUrl: `${this.deps.publicBaseUrl}/api/v1/notify/payment/${pick.channelCode}`,
      extra: pick.extra,
      ...(pick.payer === undefined ? {} : { payer: pick.payer }),
      subMerchantNo: account?.accountNo ?? null,
      channelAccountId: account?.id ?? null,
    };
    const workflowId = orderWorkflowIdOf(order);
    try {
      return await deliverUpdate(
        () =>
          this.deps.client.workflow
            .getHandle(workflowId)
            .executeUpdate(chooseChannelUpdate, { args: [request] }),
        this.delivery(log, workflowId),
      );
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new AppError('order_closed', 'order closed');
      throw toAppError(err, 'create');
    }
  }

  async close(appId: string, tradeNo: string, log: Logger): Promise<void> {
    const order = await this.find(appId, tradeNo);
    const decision = closeDecision(order.status);
    if (decision === 'closed') return;
    if (decision !== 'close') throw refused(decision);
    const workflowId = orderWorkflowId(order.appId, order.merchantOrderNo);
    try {
      await deliverUpdate(
        () => this.deps.client.workflow.getHandle(workflowId).executeUpdate(closeOrderUpdate),
        this.delivery(log, workflowId),
      );
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw toAppError(err, 'close');
      // The order's workflow has ended (its answer to this close may be what was lost): the
      // read model says how it ended. Closing a closed order succeeds (SPEC §3.4).
      const now = closeDecision((await this.find(appId, tradeNo)).status);
      if (now === 'close') throw new AppError('order_closed', 'order closed');
      if (now !== 'closed') throw refused(now);
    }
  }

  /**
   * Sends a refund to its order's workflow, which decides it under the order's lock: to its open
   * run, or, when that has ended, by update-with-start to a new run that reopens it (SPEC §7).
   * Throws WorkflowNotFoundError when the order has ended (closed, or refunded before runs saved
   * their state), for the caller to read the outcome.
   */
  async refund(order: Order, request: RefundRequest, log: Logger): Promise<RefundResult> {
    const workflowId = orderWorkflowIdOf(order);
    // One deadline for both ways.
    const delivery = this.delivery(log, workflowId);
    try {
      try {
        // To the open run, as most refunds of a busy order are (20 at once share its update limit).
        return await deliverUpdate(
          () =>
            this.deps.client.workflow
              .getHandle(workflowId)
              .executeUpdate(refundOrderUpdate, { args: [request] }),
          delivery,
        );
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      // Its run has ended (or ended before it saw this refund): the next run takes it.
      return await deliverUpdate(
        () =>
          this.deps.client.workflow.executeUpdateWithStart(refundOrderUpdate, {
            args: [request],
            // An operation is used once; a retry needs a fresh one.
            startWorkflowOperation: this.reopening(order),
          }),
        { ...delivery, workflowId: undefined, withStart: true },
      );
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw err;
      if (failureType(err) === ORDER_RUN_ENDED) {
        throw new WorkflowNotFoundError('the order has ended', workflowId, undefined);
      }
      throw toAppError(err, 'refund');
    }
  }

  /** Whom the order's channel calls act for (its channel account), if anyone. */
  accountContextOf(order: Order) {
    return accountContextOf(order, this.merchants, this.accounts);
  }

  /**
   * SPEC §4: the order a verified callback is about, when the callback may be delivered to it
   * (orders' rules). The channel confirms the event first where it must (`callbacks.confirm`:
   * what only the order's account may ask, Alipay's token merchant's refund); the event
   * answered is the confirmed one.
   */
  async acceptCallback(
    channelCode: string,
    subject: OrderCallbackSubject,
    event: OrderEvent,
    callbacks: Pick<CallbacksPort, 'confirm'>,
  ): Promise<
    { ok: true; order: Order; event: OrderEvent } | { ok: false; refusal: CallbackRefusal; tradeNo?: string }
  > {
    const found =
      subject.kind === 'trade_no'
        ? await this.repository.findOrderByTradeNo(subject.tradeNo)
        : await this.repository.findOrderByChannelTradeNo(channelCode, subject.channelTradeNo);
    const named =
      subject.kind === 'trade_no'
        ? subject.tradeNo
        : `with ${channelCode} trade number ${subject.channelTradeNo}`;
    const refusal = callbackOrderRefusal(found, { named, channelCode });
    if (refusal) return { ok: false, refusal, ...(found ? { tradeNo: found.tradeNo } : {}) };
    // callbackOrderRefusal refuses a callback about no order.
    const order = found!;
    if (callbacks.confirm) {
      try {
        const confirmed = await callbacks.confirm(
          {
            currency: order.currency,
            channelTradeNo: order.channelTradeNo,
            ...(await this.accountContextOf(order)),
          },
          event,
        );
        if (confirmed.kind === 'transfer') throw new Error('the channel confirmed the event as a transfer');
        event = confirmed;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        return { ok: false, refusal: { outcome: 'unconfirmed', message }, tradeNo: order.tradeNo };
      }
    }
    // The merchant is read only when the channel names a sub-merchant to compare.
    const subMerchantNo =
      event.subMerchantNo === undefined ? null : ((await this.accountContextOf(order)).subMerchantNo ?? null);
    const eventRefusal = callbackEventRefusal(
      { amount: order.amount, currency: order.currency, subMerchantNo },
      event,
    );
    if (eventRefusal) return { ok: false, refusal: eventRefusal, tradeNo: order.tradeNo };
    return { ok: true, order, event };
  }

  /** Delivers an accepted payment callback to its order (SPEC §4). */
  async deliverPayment(order: Order, event: Extract<ChannelEvent, { kind: 'payment' }>): Promise<void> {
    await signalOrderPayment(this.deps.client, order, {
      status: event.status,
      channelTradeNo: event.channelTradeNo,
      paidAt: event.paidAt ? event.paidAt.toISOString() : null,
      amount: event.amount,
    });
  }
}

/**
 * Hands a channel's payment result to its order (SPEC §3.2, §4): the one place an order is
 * signalled, by the callbacks through OrderService and by the payment sweeper.
 */
export async function signalOrderPayment(
  client: Client,
  order: { appId: string; merchantOrderNo: string },
  result: PaymentSignal,
): Promise<void> {
  await client.workflow
    .getHandle(orderWorkflowId(order.appId, order.merchantOrderNo))
    .signal(paymentSignal, result);
}
