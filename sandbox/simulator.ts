// Longer than 400 lines on purpose: one route per endpoint of the sandbox's contract, in its order.
/**
 * The sandbox channel's simulated upstream (SPEC §8), as an Express router to mount at /sandbox.
 * The gateway's adapter (src/channels/sandbox/index.ts) reaches it over HTTP like a real channel:
 * every /v1 call is signed with Sandbox-Signature. The buyer's pages (/pay), the payee's
 * (/transfers/…/confirm) and the contract page (/sign) are not, since a browser opens them. State
 * lives in Postgres (./store.ts), so every process serving /sandbox shares it.
 *
 * Longer than 300 lines: the simulated channel's whole HTTP API in one router, the way a real
 * channel's API is one document; its state lives in store.ts, its wire types in the adapter's
 * transformers.ts (one wire protocol, read by both ends).
 */
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type Response,
  type Router,
} from 'express';
import Joi from 'joi';
import type { Database } from '../src/platform/db';
import { isUploadMediaType } from '../src/modules/merchants/rules';
import { readRawBody } from '../src/platform/http/raw-body';
import type { Logger } from '../src/platform/logger';
import { validateStrictly } from '../src/platform/http/strict';
import {
  SANDBOX_PAY_METHODS as PAY_METHODS,
  SANDBOX_PAYEE_TYPES,
  SANDBOX_PERSONAL_RECEIVERS,
  SANDBOX_TRANSFER_LIMITS,
  sandboxBuyerOf,
} from '../src/channels/sandbox';
import { checkoutPage, contractPage, notFoundPage, transferConfirmPage } from './pages';
import { qrImage } from '../src/platform/qr';
import { isoOrNull } from '../src/platform/dates';
import { Background } from './background';
import { contractRoutes } from './contracts';
import type { ScaledClock } from '../src/platform/clock';
import { LOST_UNTIL_RELEASED_MARKER, SandboxControls, type PayeeAnswer, type PayeeResult } from './controls';
import { statementLines } from './statement';
import { shanghaiDay, tradebillFile } from './wechatpay/tradebill';
import { SANDBOX_STATEMENT_SHA1_HEADER } from '../src/channels/sandbox/statements';
import {
  SANDBOX_SIGNATURE_HEADER,
  signSandboxPayload,
  verifySandboxSignature,
} from '../src/channels/sandbox/signature';
import {
  SandboxRefusal,
  SandboxStore,
  type ApplicationRow,
  type AuditOutcome,
  type CallbackMode,
  type OrderRow,
  type RefundRow,
  type ShareReturnRow,
  type TransferRow,
} from './store';
import type {
  WireApplicationState,
  WireBarcodeAnswer,
  WireBarcodePayment,
  WireReverseAnswer,
  WireCreateOrder,
  WireCreateRefund,
  WireOrderCreated,
  WireOrderState,
  WirePaymentCallback,
  WireProfitShareRequest,
  WireProfitShareState,
  WireRefundCallback,
  WireApplyAbnormalRefund,
  WireRefundState,
  WireShareReturnRequest,
  WireShareReturnState,
  WireSubMerchant,
  WireSubmitApplication,
  WireCreateTransfer,
  WireTransferCallback,
  WireTransferState,
  WireUnfreezeRequest,
  WireUnfreezeState,
  WireUploadFile,
} from '../src/channels/sandbox/transformers';

export interface SandboxDeps {
  db: Database;
  secret: string;
  /** Scheme, host and port the buyer's browser reaches this server at, e.g. http://127.0.0.1:8080. */
  publicBaseUrl: string;
  /** How long a refund stays `processing` before it settles and its callback is posted. */
  refundDelayMs: number;
  logger: Logger;
  /** The wait of `extra.sandbox.callback: "delay"`; about 2 s unless a test shortens it. */
  callbackDelayMs?: number;
  /**
   * Where callbacks and settlements due after an answer run, each under its order's trade_no: a
   * caller that passes its own can wait for them (`idle(tradeNo)`). One of its own by default.
   */
  background?: Background;
  /** What a test steers beyond requests (statements held back, lost payments); one of its own by default. */
  controls?: SandboxControls;
  /** How long a sandbox buyer who confirms later (`confirms_later`) takes; 1 s unless set. */
  buyerConfirmMs?: number;
  /**
   * How long an `openid` payee has to confirm a transfer before it is closed as failed
   * (`OVERDUE_CLOSE`), as WeChat Pay closes it: 24 hours, unless set.
   */
  transferConfirmWindowMs?: number;
  /** The contracts' clock (SPEC §17): real time unless a time-scaled stack runs its calendar faster. */
  clock?: ScaledClock;
}

/** Uploads are at most 5 MiB, i.e. about 6.7 MiB as base64 inside JSON. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_FILE_BYTES = 5 * 1024 * 1024;
const CALLBACK_TIMEOUT_MS = 10_000;
const DEFAULT_CALLBACK_DELAY_MS = 2_000;
const DEFAULT_BUYER_CONFIRM_MS = 1_000;

// ---- request schemas (strict: no coercion, unknown keys refused, except inside `extra`) ----

interface SandboxFaults {
  fail_create?: boolean;
  latency_ms?: number;
  callback?: CallbackMode;
  /** `stale`: queries keep answering pending after the buyer paid (a channel whose query lags). */
  query?: 'fresh' | 'stale';
  /** The first N requests to close the order are answered 503, as by a channel that is down. */
  close_failures?: number;
}

/** A refund whose reason holds this is answered 2 s after the channel accepted it. */
const REFUND_SLOW_MARKER = '[sandbox:slow]';
const SLOW_REFUND_ANSWER_MS = 2_000;
/** A refund whose reason holds this is accepted, and every request for it is cut off unanswered. */
const REFUND_NO_ANSWER_MARKER = '[sandbox:no-answer]';
/** A refund whose reason holds this never reaches the channel: the connection is cut at once. */
const REFUND_UNREACHABLE_MARKER = '[sandbox:unreachable]';

/** A transfer whose remark holds this is accepted, and fails once its time comes, with a reason. */
const TRANSFER_FAIL_MARKER = '[transfer:fail]';
/** A transfer whose remark holds this is refused at once: nothing is stored. */
const TRANSFER_REFUSE_MARKER = '[transfer:refuse]';
/** A transfer whose remark holds this is stored, and every answer to its create is cut off. */
const TRANSFER_LOST_MARKER = '[transfer:lost]';
/** A transfer whose remark holds this stays processing for SLOW_TRANSFER_MS before it settles. */
const TRANSFER_SLOW_MARKER = '[transfer:slow]';
const SLOW_TRANSFER_MS = 3_000;
const DEFAULT_TRANSFER_CONFIRM_WINDOW_MS = 24 * 60 * 60_000;

const reference = Joi.string()
  .min(1)
  .max(64)
  .pattern(/^[A-Za-z0-9_\-|*.@]+$/);
const amount = Joi.number()
  .integer()
  .min(1)
  .max(10 ** 12);
const httpUrl = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .max(1024);

const faultsSchema = Joi.object<SandboxFaults>({
  fail_create: Joi.boolean(),
  latency_ms: Joi.number().integer().min(0).max(60_000),
  callback: Joi.string().valid('normal', 'drop', 'duplicate', 'delay'),
  query: Joi.string().valid('fresh', 'stale'),
  close_failures: Joi.number().integer().min(0).max(100),
});

const createOrderSchema = Joi.object<WireCreateOrder>({
  trade_no: reference.required(),
  amount: amount.required(),
  currency: Joi.string().valid('CNY').required(),
  pay_method: Joi.string()
    .valid(...PAY_METHODS)
    .required(),
  subject: Joi.string().min(1).max(256).required(),
  expire_at: Joi.string().isoDate().required(),
  notify_url: httpUrl.required(),
  extra: Joi.object({ sandbox: faultsSchema }).unknown(true).required(),
  sub_merchant_no: Joi.string().min(1).max(64).allow(null).required(),
  profit_sharing: Joi.boolean().required(),
}).required();

const barcodePaymentSchema = Joi.object<WireBarcodePayment>({
  trade_no: reference.required(),
  amount: amount.required(),
  currency: Joi.string().valid('CNY'),
  subject: Joi.string().min(1).max(256).required(),
  auth_code: Joi.string()
    .pattern(/^[0-9A-Za-z]{10,128}$/)
    .required(),
  device_id: Joi.string().min(1).max(64),
  store_id: Joi.string().min(1).max(64),
  notify_url: httpUrl.required(),
  sub_merchant_no: Joi.string().min(1).max(64).allow(null).required(),
  profit_sharing: Joi.boolean().required(),
}).required();

const createRefundSchema = Joi.object<WireCreateRefund>({
  refund_no: reference.required(),
  trade_no: reference.required(),
  amount: amount.required(),
  total_amount: amount.required(),
  reason: Joi.string().max(512).allow('', null),
  notify_url: httpUrl.required(),
}).required();

const profitShareSchema = Joi.object<WireProfitShareRequest>({
  share_no: reference.required(),
  trade_no: reference.required(),
  receivers: Joi.array()
    .items(
      Joi.object({
        type: Joi.string().min(1).max(32).required(),
        account: Joi.string().min(1).max(128).required(),
        name: Joi.string().max(128).allow(null),
        amount: amount.required(),
      }),
    )
    .min(1)
    .max(50)
    .required(),
}).required();

const shareReturnSchema = Joi.object<WireShareReturnRequest>({
  return_no: reference.required(),
  share_no: reference.required(),
  trade_no: reference.required(),
  receiver: Joi.object({
    type: Joi.string().min(1).max(32).required(),
    account: Joi.string().min(1).max(128).required(),
  }).required(),
  amount: amount.required(),
  description: Joi.string().min(1).max(256).required(),
}).required();

const unfreezeSchema = Joi.object<WireUnfreezeRequest>({
  unfreeze_no: reference.required(),
  trade_no: reference.required(),
  description: Joi.string().min(1).max(256).required(),
}).required();

const personalText = Joi.string().min(1).max(128).allow(null);
const applyAbnormalSchema = Joi.object<WireApplyAbnormalRefund>({
  method: Joi.string().valid('user_bank_card', 'merchant_bank_card').required(),
  bank_type: Joi.string().min(1).max(32).allow(null).required(),
  bank_account: personalText.required(),
  real_name: personalText.required(),
}).required();

/**
 * A sub-merchant number starting so stands for another platform's merchant: asked about, it is
 * refused. Every other number is this platform's, the onboarding's own (SBXM…) and any a demo or
 * a test makes up, so that any number can be attached.
 */
const FOREIGN_SUB_MERCHANT = /^foreign/i;

/** A return from a receiver whose account holds this is refused, as by a receiver's channel. */
const RETURN_REFUSE_MARKER = '[sandbox:refuse-return]';

const uploadFileSchema = Joi.object<WireUploadFile>({
  file_name: Joi.string().min(1).max(256).required(),
  media_type: Joi.string().min(1).max(128).required(),
  // Joi's base64() is a backtracking regex: on multi-MiB input V8 runs out of backtracking
  // stack ("Maximum call stack size exceeded"). A round trip through Buffer is linear.
  content_base64: Joi.string()
    .required()
    .custom((value: string, helpers) =>
      Buffer.from(value, 'base64').toString('base64') === value ? value : helpers.error('string.base64'),
    ),
}).required();

const optionalText = Joi.string().max(128).allow('', null);
const submitApplicationSchema = Joi.object<WireSubmitApplication>({
  application_id: Joi.string().min(1).max(64).required(),
  merchant: Joi.object({
    merchant_id: Joi.string().min(1).max(64).required(),
    merchant_name: Joi.string().min(1).max(128).required(),
    license_no: optionalText,
    legal_person: optionalText,
    bank_account: optionalText,
  }).required(),
  submit_data: Joi.object({ sandbox_outcome: Joi.string().valid('finish', 'reject', 'sign') })
    .unknown(true)
    .required(),
}).required();

/** A payee's text: not empty, no U+0000 (which Postgres cannot store). */
const payeeText = (max: number) =>
  Joi.string()
    .min(1)
    .max(max)
    .custom((value: string, helpers) =>
      value.includes('\u0000') ? helpers.message({ custom: '{{#label}} must not contain U+0000' }) : value,
    );

const createTransferSchema = Joi.object<WireCreateTransfer>({
  transfer_no: reference.required(),
  sub_merchant_no: Joi.string().min(1).max(64).allow(null),
  amount: amount.required(),
  payee: Joi.object({
    type: Joi.string()
      .valid(...SANDBOX_PAYEE_TYPES)
      .required(),
    account: payeeText(SANDBOX_TRANSFER_LIMITS.account).required(),
    name: payeeText(SANDBOX_TRANSFER_LIMITS.name).allow(null),
  }).required(),
  remark: payeeText(SANDBOX_TRANSFER_LIMITS.remark).required(),
  callback_url: httpUrl.required(),
}).required();

const payeeAnswerSchema = Joi.object<{ result: PayeeResult }>({
  result: Joi.string().valid('confirm', 'expire').required(),
}).required();

const payAsBuyerSchema = Joi.object<{ result: 'success' | 'fail' }>({
  result: Joi.string().valid('success', 'fail').required(),
}).required();

function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  return validateStrictly(schema, value, (message) => new SandboxRefusal(400, 'invalid_request', message));
}

// ---- body handling ----

function rawBodyOf(req: Request): Buffer {
  return req.rawBody ?? Buffer.alloc(0);
}

function jsonBody(req: Request): unknown {
  const raw = rawBodyOf(req);
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new SandboxRefusal(400, 'invalid_request', 'request body is not valid JSON');
  }
}

function describeError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { message, code, cause } = err as { message?: unknown; code?: unknown; cause?: unknown };
  const text =
    typeof message === 'string' && message !== '' ? message : typeof code === 'string' ? code : 'error';
  return cause === undefined ? text : `${text} (${describeError(cause)})`;
}

// ---- wire answers ----

function orderState(o: OrderRow): WireOrderState {
  return {
    trade_no: o.trade_no,
    status: o.status,
    channel_trade_no: o.channel_trade_no,
    amount: o.amount,
    currency: o.currency,
    paid_at: isoOrNull(o.paid_at),
    closed_at: isoOrNull(o.closed_at),
  };
}

function refundState(r: RefundRow): WireRefundState {
  return {
    refund_no: r.refund_no,
    trade_no: r.trade_no,
    channel_refund_no: r.channel_refund_no,
    amount: r.amount,
    status: r.status,
    reason: r.reason,
    fail_reason: r.fail_reason,
    refunded_at: isoOrNull(r.refunded_at),
  };
}

function shareReturnState(r: ShareReturnRow): WireShareReturnState {
  return {
    return_no: r.return_no,
    share_no: r.share_no,
    status: r.status,
    channel_return_no: r.channel_return_no,
    fail_reason: null,
  };
}

const TRANSFER_CALLBACK_TYPES = {
  success: 'transfer.success',
  failed: 'transfer.failed',
  cancelled: 'transfer.cancelled',
} as const;

/** Why a transfer can no longer be cancelled, in the simulator's refusal. */
function tooLateToCancel(t: TransferRow): string {
  const why =
    t.status === 'processing' && t.confirmed_at !== null
      ? 'the payee confirmed it and the money is on its way'
      : `it is ${t.status}`;
  return `transfer ${t.transfer_no} cannot be cancelled: ${why}, too late to cancel`;
}

const REFUND_CALLBACK_TYPES = {
  success: 'refund.success',
  failed: 'refund.failed',
  abnormal: 'refund.abnormal',
} as const;

const AUDIT_MESSAGES: Record<ApplicationRow['status'], string> = {
  submitted: 'application received',
  auditing: 'application under review',
  to_be_signed: 'approved; waiting for the merchant to sign the contract',
  finished: 'approved; the sub-merchant is active',
  rejected: 'application rejected',
};

export function createSandboxRouter(deps: SandboxDeps): Router {
  const store = new SandboxStore(deps.db);
  const { logger, secret } = deps;
  const publicBase = `${deps.publicBaseUrl.replace(/\/+$/, '')}/sandbox`;
  const callbackDelayMs = deps.callbackDelayMs ?? DEFAULT_CALLBACK_DELAY_MS;
  const background =
    deps.background ??
    new Background((err) => logger.error('sandbox task failed', { error: describeError(err) }));
  const controls = deps.controls ?? new SandboxControls();
  const confirmWindowMs = deps.transferConfirmWindowMs ?? DEFAULT_TRANSFER_CONFIRM_WINDOW_MS;

  const payUrl = (tradeNo: string) => `${publicBase}/pay/${encodeURIComponent(tradeNo)}`;

  function applicationState(a: ApplicationRow): WireApplicationState {
    const merchantId = typeof a.merchant.merchant_id === 'string' ? a.merchant.merchant_id : null;
    return {
      application_id: a.application_id,
      application_no: a.application_no,
      status: a.status,
      sub_merchant_no: a.status === 'finished' ? a.sub_merchant_no : null,
      sign_url:
        a.status === 'to_be_signed' ? `${publicBase}/sign/${encodeURIComponent(a.application_no)}` : null,
      reject_reason:
        a.status === 'rejected'
          ? 'the sandbox rejects applications with submit_data.sandbox_outcome "reject"'
          : null,
      detail: { audit_step: a.step, message: AUDIT_MESSAGES[a.status], merchant_id: merchantId },
    };
  }

  // ---- callbacks (sandbox → durapay) ----

  /** Posts one signed callback. Failures are only logged: durapay's polling covers a loss. */
  async function deliver(
    url: string,
    body: WirePaymentCallback | WireRefundCallback | WireTransferCallback,
  ): Promise<void> {
    const raw = JSON.stringify(body);
    const subject = 'trade_no' in body ? { trade_no: body.trade_no } : { transfer_no: body.transfer_no };
    const meta = { event_id: body.event_id, type: body.type, ...subject, url };
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SANDBOX_SIGNATURE_HEADER]: signSandboxPayload(secret, raw),
        },
        body: raw,
        redirect: 'manual',
        signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
      });
      const answer = (await res.text()).slice(0, 200);
      if (res.status >= 200 && res.status < 300 && answer.trim() === 'success') {
        logger.info('sandbox callback acknowledged', meta);
      } else {
        logger.warn('sandbox callback not acknowledged', { ...meta, http_status: res.status, answer });
      }
    } catch (err) {
      logger.warn('sandbox callback failed', { ...meta, error: describeError(err) });
    }
  }

  function paymentCallback(o: OrderRow): WirePaymentCallback {
    return {
      event_id: `evt_${o.channel_trade_no}_paid`,
      type: 'payment.paid',
      trade_no: o.trade_no,
      channel_trade_no: o.channel_trade_no,
      amount: o.amount,
      currency: o.currency,
      paid_at: (o.paid_at ?? new Date()).toISOString(),
    };
  }

  function notifyPaid(o: OrderRow): void {
    const body = paymentCallback(o);
    if (o.subject.includes(LOST_UNTIL_RELEASED_MARKER)) {
      logger.info('sandbox payment callback lost (fault injection)', { trade_no: o.trade_no });
      return;
    }
    switch (o.callback_mode) {
      case 'drop':
        logger.info('sandbox payment callback dropped (fault injection)', { trade_no: o.trade_no });
        return;
      case 'duplicate':
        background.run(async () => {
          await deliver(o.notify_url, body);
          await deliver(o.notify_url, body);
        }, o.trade_no);
        return;
      case 'delay':
        // A pending callback does not keep a stopping process alive; polling covers its loss.
        background.later(callbackDelayMs, () => deliver(o.notify_url, body), o.trade_no);
        return;
      case 'normal':
        background.run(() => deliver(o.notify_url, body), o.trade_no);
    }
  }

  /** Settles a refund whose time has come; only the caller that settled it posts the callback. */
  async function settleRefund(refundNo: string): Promise<void> {
    const r = await store.settleRefund(refundNo);
    if (!r) return;
    logger.info('sandbox refund settled', { refund_no: r.refund_no, trade_no: r.trade_no, status: r.status });
    const body: WireRefundCallback = {
      event_id: `evt_${r.channel_refund_no}_${r.status}`,
      type: REFUND_CALLBACK_TYPES[r.status === 'processing' ? 'success' : r.status],
      trade_no: r.trade_no,
      refund_no: r.refund_no,
      channel_refund_no: r.channel_refund_no,
      amount: r.amount,
      ...(r.fail_reason === null ? {} : { reason: r.fail_reason }),
      refunded_at: isoOrNull(r.refunded_at),
    };
    background.run(() => deliver(r.notify_url, body), r.trade_no);
  }

  function scheduleSettle(refund: { refund_no: string; trade_no: string }, ms: number): void {
    background.later(
      ms,
      () =>
        settleRefund(refund.refund_no).catch((err: unknown) => {
          logger.error('sandbox refund could not settle', {
            refund_no: refund.refund_no,
            error: describeError(err),
          });
        }),
      refund.trade_no,
    );
  }

  // Refunds that were due while no process was running settle now rather than at their next query.
  background.run(() =>
    store
      .dueRefunds()
      .then((due) => Promise.all(due.map((refundNo) => settleRefund(refundNo))))
      .then(() => undefined)
      .catch((err: unknown) => {
        logger.warn('sandbox could not sweep due refunds', { error: describeError(err) });
      }),
  );

  // ---- transfers: their time passing, their callbacks, the payee's answer ----

  const confirmUrl = (transferNo: string) =>
    `${publicBase}/transfers/${encodeURIComponent(transferNo)}/confirm`;

  function transferState(t: TransferRow): WireTransferState {
    return {
      transfer_no: t.transfer_no,
      channel_transfer_no: t.channel_transfer_no,
      sub_merchant_no: t.sub_merchant_no,
      amount: t.amount,
      status: t.status,
      // Made when asked for rather than stored, so that it names where this process is reached.
      package_info: t.status === 'wait_user_confirm' ? confirmUrl(t.transfer_no) : null,
      fail_reason: t.fail_reason,
      created_at: new Date(t.created_at).toISOString(),
      finished_at: isoOrNull(t.finished_at),
    };
  }

  /** Posts a transfer's final state; a state on the way (waiting for the payee) is not posted. */
  function notifyTransfer(t: TransferRow): void {
    if (t.status !== 'success' && t.status !== 'failed' && t.status !== 'cancelled') return;
    logger.info('sandbox transfer finished', { transfer_no: t.transfer_no, status: t.status });
    const body: WireTransferCallback = {
      event_id: `evt_${t.channel_transfer_no}_${t.status}`,
      type: TRANSFER_CALLBACK_TYPES[t.status],
      ...transferState(t),
    };
    background.run(() => deliver(t.callback_url, body), t.transfer_no);
  }

  /** Applies what fell due for a transfer; only the caller that applied it posts the callback. */
  async function advanceTransfer(transferNo: string): Promise<void> {
    const t = await store.advanceTransfer(transferNo);
    if (t) notifyTransfer(t);
  }

  /**
   * Settles an open transfer when its time comes (work due: idle() waits for it), or cancels it
   * when its payee's time to confirm is over (a wait for a person: idle() does not).
   */
  function watchTransfer(t: TransferRow): void {
    const advance = async () => {
      try {
        const changed = await store.advanceTransfer(t.transfer_no);
        if (changed) return notifyTransfer(changed);
        // A timer may fire a moment before the database's time has come: it waits again.
        const now = await store.findTransfer(t.transfer_no);
        if (now?.status === t.status) watchTransfer(now);
      } catch (err) {
        logger.error('sandbox transfer could not advance', {
          transfer_no: t.transfer_no,
          error: describeError(err),
        });
      }
    };
    if (t.status === 'processing' && t.settle_at !== null) {
      background.later(new Date(t.settle_at).getTime() - Date.now(), advance, t.transfer_no);
    } else if (t.status === 'wait_user_confirm' && t.confirm_deadline !== null) {
      background.deadline(new Date(t.confirm_deadline).getTime() - Date.now(), advance, t.transfer_no);
    }
  }

  const processingMs = (remark: string) =>
    remark.includes(TRANSFER_SLOW_MARKER) ? SLOW_TRANSFER_MS : deps.refundDelayMs;

  /** The payee confirms a transfer waiting for it, or lets it expire now. */
  async function answerAsPayee(transferNo: string, result: PayeeResult): Promise<PayeeAnswer> {
    // A payee too late finds the transfer closed, not confirmed in time.
    await advanceTransfer(transferNo);
    const waiting = await store.findTransfer(transferNo);
    if (!waiting) {
      throw new SandboxRefusal(404, 'transfer_not_found', `transfer ${transferNo} does not exist`);
    }
    const settleAt = result === 'confirm' ? new Date(Date.now() + processingMs(waiting.remark)) : null;
    const answered = await store.answerTransfer(transferNo, settleAt);
    if (!answered) throw new Error(`sandbox transfer ${transferNo} vanished during the payee's answer`);
    const { transfer, changed } = answered;
    if (changed) {
      logger.info('sandbox transfer answered by the payee', { transfer_no: transferNo, result });
      if (result === 'confirm') watchTransfer(transfer);
      else notifyTransfer(transfer);
    } else {
      // Asked again, the same answer is answered again; another answer is too late.
      const same =
        result === 'confirm'
          ? transfer.confirmed_at !== null
          : transfer.status === 'failed' && transfer.confirmed_at === null;
      if (!same) {
        throw new SandboxRefusal(
          409,
          'transfer_not_waiting',
          `transfer ${transferNo} is ${transfer.status}: it does not wait for the payee`,
        );
      }
    }
    return { transfer_no: transfer.transfer_no, status: transfer.status };
  }
  controls.attachTransfers({
    answerAsPayee,
    subMerchantOf: async (transferNo) => {
      const transfer = await store.findTransfer(transferNo);
      if (!transfer) throw new Error(`sandbox transfer ${transferNo} does not exist`);
      return transfer.sub_merchant_no;
    },
  });

  // Transfers of an earlier process: those due settle now, the others when their time comes.
  // Only those made before this start: a transfer made meanwhile is watched by its own create.
  const startedAt = new Date();
  background.run(() =>
    store
      .openTransfers(startedAt)
      .then((open) => open.forEach(watchTransfer))
      .catch((err: unknown) => {
        logger.warn('sandbox could not take over open transfers', { error: describeError(err) });
      }),
  );

  // ---- routes ----

  const router = express.Router({ caseSensitive: true });
  // Close requests answered 503 so far, per order (a fault injected in tests; this process only).
  const closeRequests = new Map<string, number>();
  // Its own bodies, since uploads exceed the gateway's 1 MiB (a host that read them already is fine).
  router.use(readRawBody({ limit: MAX_BODY_BYTES }));

  router.get('/pay/:trade_no', async (req, res) => {
    const order = await store.findOrder(req.params.trade_no);
    if (!order) {
      res
        .status(404)
        .type('html')
        .send(notFoundPage(`Order ${req.params.trade_no}`));
      return;
    }
    const nonce = randomBytes(16).toString('base64');
    const qr = await qrImage(payUrl(order.trade_no));
    res
      .set(
        'Content-Security-Policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'`,
      )
      .set('Cache-Control', 'no-store')
      .type('html')
      .send(checkoutPage(order, nonce, qr));
  });

  router.post('/pay/:trade_no', async (req, res) => {
    const { result } = validate(payAsBuyerSchema, jsonBody(req));
    const tradeNo = req.params.trade_no;
    const outcome =
      result === 'success'
        ? await store.payOrder(tradeNo)
        : await store.findOrder(tradeNo).then((order) => (order ? { order, changed: false } : null));
    if (!outcome) throw new SandboxRefusal(404, 'order_not_found', `order ${tradeNo} does not exist`);
    const { order, changed } = outcome;
    if (order.status === 'closed')
      throw new SandboxRefusal(409, 'order_closed', `order ${tradeNo} is closed`);
    res.json({ trade_no: order.trade_no, status: order.status });
    if (changed) {
      logger.info('sandbox order paid by the buyer', { trade_no: tradeNo });
      notifyPaid(order);
    } else if (result === 'fail') {
      logger.info('sandbox buyer declined to pay', { trade_no: tradeNo });
    }
  });

  router.get('/sign/:application_no', async (req, res) => {
    const app = await store.findApplicationByNo(req.params.application_no);
    if (!app) {
      res
        .status(404)
        .type('html')
        .send(notFoundPage(`Application ${req.params.application_no}`));
      return;
    }
    const name = typeof app.merchant.merchant_name === 'string' ? app.merchant.merchant_name : '';
    res.type('html').send(contractPage(app.application_no, name));
  });

  router.get('/transfers/:transfer_no/confirm', async (req, res) => {
    const transferNo = req.params.transfer_no;
    await advanceTransfer(transferNo);
    const transfer = await store.findTransfer(transferNo);
    if (!transfer) {
      res
        .status(404)
        .type('html')
        .send(notFoundPage(`Transfer ${transferNo}`));
      return;
    }
    const nonce = randomBytes(16).toString('base64');
    res
      .set(
        'Content-Security-Policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'`,
      )
      .set('Cache-Control', 'no-store')
      .type('html')
      .send(transferConfirmPage(transfer, nonce));
  });

  router.post('/transfers/:transfer_no/confirm', async (req, res) => {
    const { result } = validate(payeeAnswerSchema, jsonBody(req));
    res.json(await answerAsPayee(req.params.transfer_no, result));
  });

  router.use('/v1', (req: Request, res: Response, next: NextFunction) => {
    const check = verifySandboxSignature(secret, req.get(SANDBOX_SIGNATURE_HEADER), rawBodyOf(req));
    if (check.ok) return next();
    logger.warn('sandbox request refused', { path: req.originalUrl, reason: check.reason });
    res.status(401).json({ error: check.reason, code: 'unauthorized' });
  });

  router.post('/v1/orders', async (req, res) => {
    const body = validate(createOrderSchema, jsonBody(req));
    const faults = validate(faultsSchema, body.extra.sandbox ?? {});
    if (faults.fail_create) {
      throw new SandboxRefusal(
        422,
        'create_refused',
        'the sandbox refused the order (extra.sandbox.fail_create)',
      );
    }
    const { order, created } = await store.createOrder({
      ...body,
      callback_mode: faults.callback ?? 'normal',
    });
    if (!created && (order.amount !== body.amount || order.pay_method !== body.pay_method)) {
      throw new SandboxRefusal(
        422,
        'trade_no_conflict',
        `trade_no ${body.trade_no} already used with different parameters`,
      );
    }
    if (created) logger.info('sandbox order created', { trade_no: order.trade_no, amount: order.amount });
    // The order exists before the answer is late: a caller that timed out finds it on retry.
    if (faults.latency_ms) await sleep(faults.latency_ms);
    const answer: WireOrderCreated = {
      trade_no: order.trade_no,
      channel_trade_no: order.channel_trade_no,
      pay_url: payUrl(order.trade_no),
      qr_code: payUrl(order.trade_no),
    };
    res.json(answer);
  });

  router.get('/v1/orders/:trade_no', async (req, res) => {
    const order = await store.findOrder(req.params.trade_no);
    if (!order)
      throw new SandboxRefusal(404, 'order_not_found', `order ${req.params.trade_no} does not exist`);
    if (controls.isLost(order)) {
      req.socket.destroy();
      return;
    }
    const stale = (order.extra.sandbox as SandboxFaults | undefined)?.query === 'stale';
    // A lagging query has not seen the payment yet; closing the order still reports it.
    if (stale && order.status === 'paid') {
      return res.json(orderState({ ...order, status: 'pending', paid_at: null }));
    }
    res.json(orderState(order));
  });

  router.post('/v1/orders/:trade_no/close', async (req, res) => {
    const existing = await store.findOrder(req.params.trade_no);
    if (existing && controls.isLost(existing)) {
      req.socket.destroy();
      return;
    }
    const failures = (existing?.extra.sandbox as SandboxFaults | undefined)?.close_failures ?? 0;
    const seen = closeRequests.get(req.params.trade_no) ?? 0;
    if (seen < failures) {
      closeRequests.set(req.params.trade_no, seen + 1);
      throw new SandboxRefusal(503, 'unavailable', 'the sandbox is down (extra.sandbox.close_failures)');
    }
    const order = await store.closeOrder(req.params.trade_no);
    if (!order)
      throw new SandboxRefusal(404, 'order_not_found', `order ${req.params.trade_no} does not exist`);
    res.json(orderState(order));
  });

  // Barcode payments (SPEC §14): what the buyer does is read off the sandbox's code
  // (src/channels/sandbox/barcode.ts).
  router.post('/v1/barcode-payments', async (req, res) => {
    const body = validate(barcodePaymentSchema, jsonBody(req));
    const buyer = sandboxBuyerOf(body.auth_code);
    if (!buyer) {
      throw new SandboxRefusal(
        422,
        'auth_code_invalid',
        'the code is not a sandbox buyer code (99…, 18 digits)',
      );
    }
    if (buyer === 'insufficient') {
      throw new SandboxRefusal(422, 'not_enough', "the buyer's balance is not enough for this payment");
    }
    if (buyer === 'expired') {
      throw new SandboxRefusal(422, 'auth_code_expired', "the buyer's code has expired: ask for a fresh one");
    }
    const codeHash = createHash('sha256').update(body.auth_code).digest('hex');
    const { auth_code: _code, ...payment } = body;
    const { order, created } = await store.createBarcodeOrder({
      ...payment,
      auth_code_sha256: codeHash,
      buyer,
      paid: buyer === 'pays' || buyer === 'answer_lost',
    });
    if (!created && (order.auth_code_sha256 !== codeHash || order.amount !== body.amount)) {
      throw new SandboxRefusal(
        422,
        'trade_no_conflict',
        `trade_no ${body.trade_no} already used with another code or amount`,
      );
    }
    if (created) {
      logger.info('sandbox barcode payment taken', { trade_no: order.trade_no, buyer });
      if (order.status === 'paid') notifyPaid(order);
      if (buyer === 'confirms_later') {
        background.later(
          deps.buyerConfirmMs ?? DEFAULT_BUYER_CONFIRM_MS,
          async () => {
            const paid = await store.payOrder(order.trade_no);
            if (paid?.changed) notifyPaid(paid.order);
          },
          order.trade_no,
        );
      }
    }
    // Charged, and the answer never reaches the till.
    if (buyer === 'answer_lost') {
      req.socket.destroy();
      return;
    }
    const answer: WireBarcodeAnswer = {
      trade_no: order.trade_no,
      channel_trade_no: order.channel_trade_no,
      status: order.status === 'paid' ? 'paid' : order.status === 'pending' ? 'paying' : 'paid',
      amount: order.amount,
      paid_at: isoOrNull(order.paid_at),
    };
    if (order.status === 'closed') {
      throw new SandboxRefusal(422, 'order_closed', `order ${order.trade_no} is closed`);
    }
    res.json(answer);
  });

  router.post('/v1/orders/:trade_no/reverse', async (req, res) => {
    const tradeNo = req.params.trade_no;
    const existing = await store.findOrder(tradeNo);
    if (!existing) throw new SandboxRefusal(404, 'order_not_found', `order ${tradeNo} does not exist`);
    const outcome = await store.reverseOrder(tradeNo, {
      paysFirst: existing.buyer === 'confirms_at_reverse' || existing.buyer === 'reverse_refused',
      refusePaid: existing.buyer === 'reverse_refused',
    });
    if (!outcome) throw new SandboxRefusal(404, 'order_not_found', `order ${tradeNo} does not exist`);
    if (outcome.kind === 'refused') {
      throw new SandboxRefusal(409, 'reverse_refused', `order ${tradeNo} is paid and cannot be reversed`);
    }
    logger.info('sandbox barcode payment reversed', { trade_no: tradeNo, refunded: outcome.refunded });
    const answer: WireReverseAnswer = { trade_no: tradeNo, status: 'reversed', refunded: outcome.refunded };
    res.json(answer);
  });

  contractRoutes(
    router,
    {
      db: deps.db,
      logger,
      secret,
      publicBase,
      background,
      controls,
      clock: deps.clock ?? { originMs: 0, scale: 1 },
      buyerConfirmMs: deps.buyerConfirmMs ?? DEFAULT_BUYER_CONFIRM_MS,
      notifyPaid,
      payOrder: (tradeNo) => store.payOrder(tradeNo),
    },
    { body: jsonBody, raw: rawBodyOf },
  );

  router.post('/v1/refunds', async (req, res) => {
    const body = validate(createRefundSchema, jsonBody(req));
    if (body.reason?.includes(REFUND_UNREACHABLE_MARKER)) {
      req.socket.destroy();
      return;
    }
    if (body.reason?.includes('[sandbox:refuse]')) {
      throw new SandboxRefusal(
        422,
        'refund_refused',
        'the sandbox refused the refund ([sandbox:refuse] in reason)',
      );
    }
    const { refund, created } = await store.createRefund(
      { ...body, reason: body.reason ?? null },
      deps.refundDelayMs,
    );
    if (created) {
      logger.info('sandbox refund accepted', { refund_no: refund.refund_no, trade_no: refund.trade_no });
      scheduleSettle(refund, deps.refundDelayMs);
      // Accepted before the answer is late: a caller that gave up finds it on retry.
      if (body.reason?.includes(REFUND_SLOW_MARKER)) await sleep(SLOW_REFUND_ANSWER_MS);
    }
    if (body.reason?.includes(REFUND_NO_ANSWER_MARKER)) {
      req.socket.destroy();
      return;
    }
    res.json(refundState(refund));
  });

  router.get('/v1/refunds/:refund_no', async (req, res) => {
    // A refund whose timer was lost (restart, another process) settles when it is asked about.
    await settleRefund(req.params.refund_no);
    const refund = await store.findRefund(req.params.refund_no);
    if (!refund)
      throw new SandboxRefusal(404, 'refund_not_found', `refund ${req.params.refund_no} does not exist`);
    res.json(refundState(refund));
  });

  // An abnormal refund paid to a bank card instead: processing again, then success with a callback.
  router.post('/v1/refunds/:refund_no/apply-abnormal', async (req, res) => {
    const body = validate(applyAbnormalSchema, jsonBody(req));
    if (
      body.method === 'user_bank_card' &&
      (body.bank_type === null || body.bank_account === null || body.real_name === null)
    ) {
      throw new SandboxRefusal(
        400,
        'invalid_request',
        'user_bank_card needs bank_type, bank_account and real_name',
      );
    }
    const { refund, changed } = await store.applyAbnormal(
      req.params.refund_no,
      body.method,
      deps.refundDelayMs,
    );
    if (changed) {
      // The method only: a card number or a name never reaches a log line.
      logger.info('sandbox abnormal refund applied', { refund_no: refund.refund_no, method: body.method });
      scheduleSettle(refund, deps.refundDelayMs);
    }
    res.json(refundState(refund));
  });

  // A day's statement (China Standard Time) in WeChat Pay's tradebill format: the gzip file, the
  // SHA-1 of its text in a header; 409 before it is ready, 404 for a day without a payment or refund.
  router.get('/v1/statements/:bill_date', async (req, res) => {
    const day = req.params.bill_date;
    const from = new Date(`${day}T00:00:00+08:00`);
    if (
      !/^\d{4}-\d{2}-\d{2}$/.test(day) ||
      Number.isNaN(from.getTime()) ||
      shanghaiDay(from.getTime()) !== day
    ) {
      throw new SandboxRefusal(400, 'invalid_request', 'bill_date must be a day, YYYY-MM-DD');
    }
    const sub = (req.query as Record<string, unknown>).sub_merchant_no;
    if (sub !== undefined && (typeof sub !== 'string' || sub === '' || sub.length > 64)) {
      throw new SandboxRefusal(
        400,
        'invalid_request',
        'sub_merchant_no must be given once, 1 to 64 characters',
      );
    }
    const subMerchantNo = typeof sub === 'string' ? sub : null;
    if (controls.askStatement(day)) {
      throw new SandboxRefusal(
        409,
        'statement_not_ready',
        `the statement of ${day} is being made: ask again later`,
      );
    }
    // Refunds due but not settled yet appear as a query would see them.
    await Promise.all((await store.dueRefunds()).map((refundNo) => settleRefund(refundNo)));
    const entries = await store.statementEntries(subMerchantNo, from, new Date(from.getTime() + 86_400_000));
    const lines = statementLines(entries);
    if (lines.length === 0) {
      throw new SandboxRefusal(404, 'statement_empty', `nothing was paid or refunded on ${day}`);
    }
    const file = await tradebillFile(lines, controls.statementLayout(subMerchantNo));
    res
      .status(200)
      .set('Content-Type', 'application/x-gzip')
      .set(SANDBOX_STATEMENT_SHA1_HEADER, file.sha1)
      .send(file.gzip);
  });

  // A payout to a person's wallet, once per transfer_no: an openid payee confirms it first.
  router.post('/v1/transfers', async (req, res) => {
    const body = validate(createTransferSchema, jsonBody(req));
    controls.countTransferCreate(body.transfer_no);
    if (body.remark.includes(TRANSFER_REFUSE_MARKER)) {
      throw new SandboxRefusal(
        422,
        'transfer_refused',
        `the sandbox refused the transfer (${TRANSFER_REFUSE_MARKER} in remark)`,
      );
    }
    const waitsForPayee = body.payee.type === 'openid';
    const now = Date.now();
    const { transfer: stored, created } = await store.createTransfer({
      transfer_no: body.transfer_no,
      sub_merchant_no: body.sub_merchant_no ?? null,
      amount: body.amount,
      payee_type: body.payee.type,
      payee_account: body.payee.account,
      payee_name: body.payee.name ?? null,
      remark: body.remark,
      callback_url: body.callback_url,
      outcome: body.remark.includes(TRANSFER_FAIL_MARKER) ? 'failed' : 'success',
      settleAt: waitsForPayee ? null : new Date(now + processingMs(body.remark)),
      confirmDeadline: waitsForPayee ? new Date(now + confirmWindowMs) : null,
    });
    let transfer = stored;
    if (created) {
      // The type only: a payee's account or name never reaches a log line.
      logger.info('sandbox transfer accepted', {
        transfer_no: transfer.transfer_no,
        amount: transfer.amount,
        payee_type: transfer.payee_type,
        status: transfer.status,
      });
      watchTransfer(transfer);
    } else {
      if (
        transfer.amount !== body.amount ||
        transfer.payee_type !== body.payee.type ||
        transfer.payee_account !== body.payee.account
      ) {
        throw new SandboxRefusal(
          422,
          'transfer_no_conflict',
          `transfer_no ${body.transfer_no} already used with different parameters`,
        );
      }
      await advanceTransfer(transfer.transfer_no);
      transfer = (await store.findTransfer(transfer.transfer_no)) ?? transfer;
    }
    if (body.remark.includes(TRANSFER_LOST_MARKER)) {
      logger.info('sandbox transfer answer lost (fault injection)', { transfer_no: transfer.transfer_no });
      req.socket.destroy();
      return;
    }
    res.json(transferState(transfer));
  });

  router.get('/v1/transfers/:transfer_no', async (req, res) => {
    const transferNo = req.params.transfer_no;
    // A transfer whose timer was lost (restart, another process) advances when it is asked about.
    await advanceTransfer(transferNo);
    const transfer = await store.findTransfer(transferNo);
    if (!transfer) {
      throw new SandboxRefusal(404, 'transfer_not_found', `transfer ${transferNo} does not exist`);
    }
    res.json(transferState(transfer));
  });

  // Allowed until the money leaves: while the payee has not confirmed, or before a transfer that
  // needs no confirmation settles. Cancelling a cancelled transfer answers it again.
  router.post('/v1/transfers/:transfer_no/cancel', async (req, res) => {
    const transferNo = req.params.transfer_no;
    const cancelled = await store.cancelTransfer(transferNo);
    if (!cancelled) {
      throw new SandboxRefusal(404, 'transfer_not_found', `transfer ${transferNo} does not exist`);
    }
    let { transfer } = cancelled;
    if (cancelled.changed) {
      logger.info('sandbox transfer cancelled', { transfer_no: transferNo });
      notifyTransfer(transfer);
    } else {
      // Too late: what fell due is applied first, so that the refusal says how it stands.
      await advanceTransfer(transferNo);
      transfer = (await store.findTransfer(transferNo)) ?? transfer;
      if (transfer.status !== 'cancelled') {
        throw new SandboxRefusal(409, 'transfer_not_cancellable', tooLateToCancel(transfer));
      }
    }
    res.json(transferState(transfer));
  });

  router.post('/v1/profit-shares', async (req, res) => {
    const body = validate(profitShareSchema, jsonBody(req));
    const share = await store.createProfitShare(body);
    const answer: WireProfitShareState = {
      share_no: share.share_no,
      trade_no: share.trade_no,
      status: share.status,
      fail_reason: null,
    };
    res.json(answer);
  });

  // Part of a share taken back from a receiver, at once; refused for a person's wallet, or a receiver steered to refuse.
  router.post('/v1/share-returns', async (req, res) => {
    const body = validate(shareReturnSchema, jsonBody(req));
    const { type, account } = body.receiver;
    if (SANDBOX_PERSONAL_RECEIVERS.includes(type.toUpperCase())) {
      throw new SandboxRefusal(
        422,
        'return_refused',
        `a ${type} receiver's share cannot be taken back: returns come from merchant receivers only`,
      );
    }
    if (account.includes(RETURN_REFUSE_MARKER)) {
      throw new SandboxRefusal(
        422,
        'return_refused',
        `the receiver refused the return (${RETURN_REFUSE_MARKER} in its account)`,
      );
    }
    const { ret, created } = await store.createShareReturn(body);
    if (created) {
      logger.info('sandbox share return accepted', { return_no: ret.return_no, share_no: ret.share_no });
    }
    res.json(shareReturnState(ret));
  });

  router.get('/v1/share-returns/:return_no', async (req, res) => {
    const ret = await store.findShareReturn(req.params.return_no);
    if (!ret) {
      throw new SandboxRefusal(
        404,
        'return_not_found',
        `share return ${req.params.return_no} does not exist`,
      );
    }
    res.json(shareReturnState(ret));
  });

  // What a payment froze for sharing, released to the merchant when nothing will be shared.
  router.post('/v1/unfreezes', async (req, res) => {
    const body = validate(unfreezeSchema, jsonBody(req));
    const { unfreeze, created } = await store.createUnfreeze(body);
    if (created)
      logger.info('sandbox order unfrozen', { unfreeze_no: body.unfreeze_no, trade_no: body.trade_no });
    const answer: WireUnfreezeState = {
      unfreeze_no: unfreeze.unfreeze_no,
      trade_no: unfreeze.trade_no,
      channel_unfreeze_no: unfreeze.channel_unfreeze_no,
      status: 'finished',
    };
    res.json(answer);
  });

  router.post('/v1/files', async (req, res) => {
    const body = validate(uploadFileSchema, jsonBody(req));
    if (!isUploadMediaType(body.media_type)) {
      throw new SandboxRefusal(
        422,
        'unsupported_media_type',
        `media type ${body.media_type} is not accepted`,
      );
    }
    const content = Buffer.from(body.content_base64, 'base64');
    if (content.length === 0) throw new SandboxRefusal(422, 'empty_file', 'the file is empty');
    if (content.length > MAX_FILE_BYTES)
      throw new SandboxRefusal(422, 'file_too_large', 'the file is larger than 5 MiB');
    const sha256 = createHash('sha256').update(content).digest('hex');
    const fileId = await store.createFile({
      file_name: body.file_name,
      media_type: body.media_type,
      size: content.length,
      sha256,
    });
    res.json({ file_id: fileId, size: content.length, sha256 });
  });

  router.post('/v1/applications', async (req, res) => {
    const body = validate(submitApplicationSchema, jsonBody(req));
    const outcome = (body.submit_data.sandbox_outcome ?? 'finish') as AuditOutcome;
    const app = await store.createApplication({
      application_id: body.application_id,
      merchant: body.merchant,
      submit_data: body.submit_data,
      outcome,
    });
    res.json(applicationState(app));
  });

  router.get('/v1/applications/:application_id', async (req, res) => {
    const app = await store.advanceApplication(req.params.application_id);
    if (!app) {
      throw new SandboxRefusal(
        404,
        'application_not_found',
        `application ${req.params.application_id} does not exist`,
      );
    }
    res.json(applicationState(app));
  });

  // Whether a sub-merchant is this platform's, asked before an account names it.
  router.get('/v1/sub-merchants/:sub_merchant_no', (req, res) => {
    const subMerchantNo = req.params.sub_merchant_no;
    if (subMerchantNo.length > 64) {
      throw new SandboxRefusal(400, 'invalid_request', 'a sub_merchant_no is at most 64 characters');
    }
    if (FOREIGN_SUB_MERCHANT.test(subMerchantNo)) {
      throw new SandboxRefusal(
        404,
        'sub_merchant_not_found',
        `sub-merchant ${subMerchantNo} does not belong to this platform`,
      );
    }
    const answer: WireSubMerchant = { sub_merchant_no: subMerchantNo, status: 'active' };
    res.json(answer);
  });

  router.use((req: Request, res: Response) => {
    res.status(404).json({ error: `no sandbox endpoint ${req.method} ${req.path}`, code: 'not_found' });
  });

  const errors: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    if (err instanceof SandboxRefusal) {
      res.status(err.httpStatus).json({ error: err.message, code: err.code });
      return;
    }
    // body-parser's own errors (too large, aborted) carry a 4xx status and a safe message.
    const status = typeof err === 'object' && err !== null ? (err as { status?: unknown }).status : undefined;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).json({ error: describeError(err), code: 'invalid_request' });
      return;
    }
    logger.error('sandbox request failed', { path: req.originalUrl, error: describeError(err) });
    res.status(500).json({ error: 'sandbox internal error', code: 'internal' });
  };
  router.use(errors);

  return router;
}
