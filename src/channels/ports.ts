/**
 * Longer than 300 lines: every port a channel may implement, so that an adapter's whole contract
 * is read in one file.
 *
 * The capability ports an upstream channel implements (STYLE: one folder per channel, wire
 * formats in its transformers.ts, signing in its signature.ts). Every call carries durapay's own
 * reference (trade_no, refund_no, share_no, application_id), which the channel treats as an
 * idempotency key, so a retried activity never creates a second upstream object; and the
 * order's channel context, because a service provider's API wants the account and the
 * sub-merchant on every call, not only on the create.
 *
 * A channel is a set of ports rather than one interface of optional methods: a capability's
 * methods come and go together (a channel that refunds can also query a refund), so "can it?"
 * is one presence check per capability, and no flag in the capabilities can disagree with it.
 */
import type { ApplicationStatus } from '../modules/applications/rules';
import type { Schema } from 'joi';
import type { SettingReader } from '../platform/config-parts';
import type { PayMethod } from '../modules/orders/rules';
import { ChannelError } from './errors';

/** Which configured account of the channel a call is made with, and about which order. */
export interface ChannelContext {
  /** The configured account (the registry's name for it); absent: the channel's default account. */
  account?: string;
  /**
   * The sub-merchant a service provider acts for (WeChat Pay `sub_mchid`; for Alipay the
   * adapter finds the merchant's `app_auth_token` by it). Absent for a direct merchant.
   */
  subMerchantNo?: string;
  /**
   * The app_auth_token of an Alipay merchant that authorised durapay's app (its channel account,
   * SPEC §5.8), opened from the account when the call is made: a refreshed token is used by the
   * orders made before. When present, `subMerchantNo` is only the merchant's user id.
   */
  appAuthToken?: string;
  /** The channel's own number of the payment (WeChat `transaction_id`, Alipay `trade_no`); null: none yet. */
  channelTradeNo?: string | null;
  /** The order's currency (ISO 4217). */
  currency?: string;
}

/** A create knows its currency; a share must say which channel payment it shares. */
export type CreateContext = ChannelContext & { currency: string };
export type TradeContext = ChannelContext & { channelTradeNo: string | null };

/** What a channel says about itself; what it can do is which ports it has. */
export interface ChannelCapabilities {
  payMethods: readonly PayMethod[];
  /** Largest amount the channel accepts, in minor units. */
  maxAmount: number;
  currency: string;
  /** Orders need a merchant's account at the channel (a service provider's sub-merchant): none without one. */
  merchantRequired?: true;
}

// ---- payments ----

export interface CreatePaymentInput {
  tradeNo: string;
  amount: number;
  payMethod: PayMethod;
  subject: string;
  expireAt: Date;
  /** Where the channel posts its asynchronous results (our callback endpoint). */
  callbackUrl: string;
  extra?: Record<string, unknown>;
  profitSharing: boolean;
}

export interface CreatePaymentResult {
  channelTradeNo: string | null;
  /** What the client needs to start paying; its shape depends on channel and pay method. */
  payCredential: Record<string, unknown>;
}

export type PaymentState =
  | { status: 'pending' }
  | { status: 'paid'; channelTradeNo: string; paidAt: Date; amount: number }
  | { status: 'closed' }
  | { status: 'not_found' };

export interface PaymentsPort {
  create(ctx: CreateContext, input: CreatePaymentInput): Promise<CreatePaymentResult>;
  query(ctx: ChannelContext, tradeNo: string): Promise<PaymentState>;
  /** Closes an unpaid order; reports `paid` when the buyer paid first. */
  close(ctx: ChannelContext, tradeNo: string): Promise<PaymentState>;
}

// ---- barcode payments ----

/**
 * A payment the cashier takes by scanning the code in the buyer's wallet (付款码, SPEC §14):
 * WeChat Pay's codepay, Alipay's `alipay.trade.pay` with `scene: bar_code`.
 */
export interface BarcodePaymentInput {
  tradeNo: string;
  amount: number;
  subject: string;
  /** The code scanned: good for one payment and about a minute; a credential, never logged. */
  authCode: string;
  /** The till and the shop, for the channel's scene fields. */
  deviceId?: string;
  storeId?: string;
  /** Where the channel posts the payment's result, when it does for a barcode payment. */
  callbackUrl: string;
  profitSharing: boolean;
}

/**
 * What the channel answered a barcode payment: `paid`, or `paying` (WeChat Pay `USERPAYING`,
 * Alipay `WAIT_BUYER_PAY`/10003: the buyer is confirming in the wallet; follow it by query). A
 * code the channel refused (wrong or used, expired, not enough balance, the buyer's limit) throws
 * ChannelError('refused') with the channel's reason; no answer throws ChannelError('unreachable'
 * | 'timeout' | 'invalid_response'): whether the buyer was charged is unknown, so the payment
 * must be reversed.
 */
export type BarcodeAnswer =
  | { status: 'paid'; channelTradeNo: string; paidAt: Date; amount: number }
  | { status: 'paying'; channelTradeNo: string | null };

/**
 * What a reverse (WeChat Pay 撤销, Alipay `alipay.trade.cancel`) did: `reversed`, the payment is
 * closed and whatever the buyer was charged goes back (`refunded`: it had been charged); or
 * `retry`, the channel asks to be asked again (the buyer still confirming, Alipay's
 * `retry_flag: Y`). A channel that will not reverse a payment it holds throws
 * ChannelError('refused'); no answer throws ChannelError('unreachable' | 'timeout').
 */
export type ReverseAnswer =
  | {
      status: 'reversed';
      /** Whether the buyer had been charged and was given the money back, when the channel says (WeChat Pay's answer does not). */
      refunded?: boolean;
      /**
       * The channel has no such payment: nothing taken yet. A payment request still on its way
       * may yet arrive, which is why the order's workflow asks such a reverse again for a while.
       */
      unseen?: boolean;
    }
  | { status: 'retry'; reason: string };

export interface BarcodePort {
  pay(ctx: CreateContext, input: BarcodePaymentInput): Promise<BarcodeAnswer>;
  reverse(ctx: TradeContext, tradeNo: string): Promise<ReverseAnswer>;
}

// ---- refunds ----

export interface RefundInput {
  tradeNo: string;
  refundNo: string;
  amount: number;
  totalAmount: number;
  reason?: string;
  callbackUrl: string;
  /**
   * Parts of the order's profit share taken back from its receivers with this refund, for a
   * channel whose returns travel on the refund (`ProfitSharingPort.returns === 'with_refund'`,
   * Alipay's `refund_royalty_parameters`). Absent: nothing is taken back.
   */
  shareReturns?: (ProfitShareReceiver & { amount: number })[];
}

/** Alipay finds a refund by the payment's number and the refund's; WeChat Pay by the refund's. */
export interface RefundRef {
  tradeNo: string;
  refundNo: string;
}

/**
 * `abnormal` (WeChat Pay `ABNORMAL`): the money left the order but the buyer's account could not
 * take it; it stays out of the order until it is paid out another way (`applyAbnormal`).
 */
export type RefundState =
  | { status: 'processing'; channelRefundNo: string | null }
  | { status: 'success'; channelRefundNo: string | null; refundedAt: Date }
  | { status: 'failed'; channelRefundNo: string | null; reason: string }
  | { status: 'abnormal'; channelRefundNo: string | null; reason: string }
  | { status: 'not_found' };

/** How an abnormal refund is paid out instead (WeChat Pay 发起异常退款). */
export interface AbnormalRefundInput {
  tradeNo: string;
  refundNo: string;
  /** The channel's number of the refund (WeChat Pay `refund_id`). */
  channelRefundNo: string;
  method: 'user_bank_card' | 'merchant_bank_card';
  /** The bank (WeChat Pay `bank_type`); with user_bank_card. */
  bankType?: string;
  /** Personal data: sent sealed with the channel's key, never logged. */
  bankAccount?: string;
  realName?: string;
}

export interface RefundsPort {
  refund(ctx: ChannelContext, input: RefundInput): Promise<RefundState>;
  query(ctx: ChannelContext, ref: RefundRef): Promise<RefundState>;
  /**
   * Asks the channel to pay an `abnormal` refund out another way; answers the refund's state
   * (usually `processing`). Idempotent: asking again for a refund under way answers its state.
   * A channel without abnormal refunds leaves it out.
   */
  applyAbnormal?(ctx: ChannelContext, input: AbnormalRefundInput): Promise<RefundState>;
}

// ---- profit sharing ----

export interface ProfitShareReceiver {
  type: string;
  account: string;
  name?: string;
}

export interface ProfitShareInput {
  tradeNo: string;
  shareNo: string;
  receivers: (ProfitShareReceiver & { amount: number })[];
}

export type ProfitShareState =
  { status: 'processing' } | { status: 'finished' } | { status: 'failed'; reason: string };

/** Part of a share taken back from one receiver before a refund (WeChat Pay return-orders). */
export interface ShareReturnInput {
  tradeNo: string;
  /** The share the part is taken back from. */
  shareNo: string;
  /** durapay's number of this return: the channel's idempotency key (`out_return_no`). */
  returnNo: string;
  receiver: ProfitShareReceiver;
  amount: number;
  description: string;
}

export type ShareReturnState =
  | { status: 'processing' }
  | { status: 'success'; channelReturnNo: string | null }
  | { status: 'failed'; reason: string };

export interface ProfitSharingPort {
  /**
   * Declares receivers to the channel before they are shared to (WeChat Pay's
   * `profitsharing/receivers/add`, Alipay's `royalty.relation.bind`); idempotent. A channel that
   * shares to any account leaves it out.
   */
  registerReceivers?(ctx: ChannelContext, receivers: ProfitShareReceiver[]): Promise<void>;
  /** Shares a paid payment, named by the channel's own number where the channel wants it. */
  share(ctx: TradeContext, input: ProfitShareInput): Promise<ProfitShareState>;
  /**
   * Where a sharing the channel settles later stands (WeChat Pay answers PROCESSING first);
   * not_found when the channel never took it. A channel that settles at once leaves it out.
   */
  query?(
    ctx: TradeContext,
    ref: { tradeNo: string; shareNo: string },
  ): Promise<ProfitShareState | { status: 'not_found' }>;
  /**
   * Releases to the merchant what a payment froze for sharing, when nothing will be shared
   * (WeChat Pay `profitsharing/orders/unfreeze`). Idempotent on `unfreezeNo`. A channel that
   * freezes nothing leaves it out. An answer `processing` is followed with `query`, the
   * unfreeze's number as `shareNo` (WeChat Pay keeps an unfreeze as a sharing order).
   */
  unfreeze?(
    ctx: TradeContext,
    input: { tradeNo: string; unfreezeNo: string; description: string },
  ): Promise<ProfitShareState>;
  /**
   * How a share is taken back before a refund larger than the unshared remainder (SPEC §3.7):
   * `separate` — by `returnShare`, receiver by receiver, before the refund (WeChat Pay, the
   * sandbox); `with_refund` — named on the refund itself (`RefundInput.shareReturns`, Alipay).
   * Absent: the channel cannot take a share back, and such a refund is refused.
   */
  readonly returns?: 'separate' | 'with_refund';
  /** Whether a receiver's share can be taken back (WeChat Pay: merchant receivers only). */
  returnable?(receiver: ProfitShareReceiver): boolean;
  /**
   * Takes part of a share back from one receiver; idempotent on `returnNo`. A return the channel
   * refused or failed (a receiver that cannot be asked, more than it was given) answers `failed`
   * with the channel's reason; it throws only when the outcome is unknown (no trustworthy answer:
   * ask again with the same `returnNo`, or `queryReturn`) or the request itself was malformed.
   */
  returnShare?(ctx: TradeContext, input: ShareReturnInput): Promise<ShareReturnState>;
  /** Where a return stands; not_found when the channel never took it. */
  queryReturn?(
    ctx: TradeContext,
    ref: { tradeNo: string; shareNo: string; returnNo: string },
  ): Promise<ShareReturnState | { status: 'not_found' }>;
}

// ---- onboarding ----

export interface UploadFileInput {
  fileName: string;
  mediaType: string;
  content: Buffer;
}

export interface SubmitApplicationInput {
  applicationId: string;
  merchant: {
    merchantId: string;
    merchantName: string;
    licenseNo?: string | null;
    legalPerson?: string | null;
    bankAccount?: string | null;
  };
  submitData: Record<string, unknown>;
}

export interface ApplicationState {
  status: ApplicationStatus;
  channelApplicationNo: string | null;
  subMerchantNo: string | null;
  signUrl: string | null;
  rejectReason: string | null;
  detail: Record<string, unknown>;
}

export interface OnboardingPort {
  /**
   * The shape of the file ids the channel assigns to uploads, when it has one: a text of this
   * shape in an application's submit_data is a file reference, uploaded or not.
   */
  readonly fileIdPattern?: RegExp;
  /**
   * Why the channel would refuse this application as it stands, naming the submit_data field
   * (`submit_data.contact_info.mobile_phone: is required`); undefined when nothing is missing.
   * Asked before an application is opened, so that bad input is a 400, not a failed audit.
   */
  problemWith?(input: Omit<SubmitApplicationInput, 'applicationId'>): string | undefined;
  uploadFile(ctx: ChannelContext, input: UploadFileInput): Promise<{ fileId: string }>;
  submit(ctx: ChannelContext, input: SubmitApplicationInput): Promise<ApplicationState>;
  query(ctx: ChannelContext, applicationId: string): Promise<ApplicationState>;
}

// ---- merchant accounts ----

/**
 * One kind of account a channel's merchants have there (SPEC §5.8), as its descriptor declares
 * it: the field a client names it with, which is also the kind the account's row keeps, and how
 * it is checked, kept and shown. Merchants, the OpenAPI document, the SDK and the console derive
 * their forms and schemas from these declarations (src/channels/registry.ts).
 */
export interface AccountKindDeclaration<K extends string = string> {
  /** The field that names the account in an attach body and in the account's view: `sub_mchid`. */
  readonly kind: K;
  /** Its name for people, as the console's form shows it: `Sub-merchant id (sub_mchid)`. */
  readonly label: string;
  /** What it is, for the API reference: `the sub-merchant number`. */
  readonly description: string;
  /** The shape of a value, checked before anything is asked of the channel. */
  readonly pattern: RegExp;
  /** The `400 invalid_param` message for a value of another shape, naming the field. */
  readonly patternMessage: string;
  /** A value of the right shape, for the API reference (and the tests of the declaration). */
  readonly example: string;
  /**
   * `number`: the value is the account's number, kept and shown as it is. `token`: the value is a
   * credential that acts for the merchant (an Alipay app_auth_token): sealed at rest, shown
   * masked, handed to the channel's calls as `ChannelContext.appAuthToken`, followed until it
   * expires; the account's number is what the channel's confirmation answers (the merchant's
   * user id).
   */
  readonly holds: 'number' | 'token';
  /** How the channel confirms it before it is saved, for the API reference and the console. */
  readonly confirmation: string;
}

/**
 * The accounts a channel's merchants have there: an attach names exactly one of `kinds`; an
 * approved onboarding application gives its merchant an account of the kind `onboarded`.
 */
export interface ChannelAccountsDeclaration<K extends string = string> {
  readonly kinds: readonly AccountKindDeclaration<K>[];
  readonly onboarded?: NoInfer<K>;
}

/** One kind of payee a channel's transfers pay (SPEC §11), as its descriptor declares it. */
export interface PayeeKindDeclaration<P extends string = string> {
  /** The `payee.type` that names it: `openid`. */
  readonly type: P;
  /** What `payee.account` holds for it, for the API reference. */
  readonly description: string;
}

/**
 * A merchant's account at a channel as a client names it when it attaches one (SPEC §5.8): one of
 * the kinds the channel declares (the WeChat Pay `sub_mchid`, the Alipay `smid` or
 * `app_auth_token`, the sandbox's `sub_merchant_no`) and its value.
 */
export interface AccountClaim {
  kind: string;
  value: string;
}

export type AccountKind = string;

/** What the channel says of a claimed account it confirmed. */
export interface ConfirmedAccount {
  /**
   * The account's number at the channel, as orders record it: the sub_mchid, the smid, the
   * sandbox's number; for an app_auth_token, the authorising merchant's user id (2088…).
   */
  accountNo: string | null;
  /** When an app_auth_token stops working, when the channel says. */
  tokenExpiresAt?: Date | null;
}

/**
 * Confirms an account before durapay saves it (SPEC §5.8): WeChat Pay — the sub-merchant belongs
 * to this service provider; Alipay — the token is valid and names this app, an smid is this
 * provider's secondary merchant. A refused account throws ChannelError('refused') with the
 * channel's reason; no answer throws ChannelError('unreachable' | 'timeout'). A channel that
 * cannot confirm accounts leaves the port out, and an attached account is saved as given.
 */
export interface AccountsPort {
  confirm(ctx: ChannelContext, claim: AccountClaim): Promise<ConfirmedAccount>;
  /**
   * Third-party authorisation (Alipay 第三方应用授权), where the channel has it: the merchant
   * authorises durapay's app on the channel's page, which sends the browser back to `redirectUri`
   * with a one-time code; the code is exchanged for a token, and the token refreshed before it
   * expires. Refusals (an unknown or used code, a refresh token no longer valid) throw
   * ChannelError('refused'); no answer throws ChannelError('unreachable' | 'timeout').
   */
  readonly authorization?: {
    /** The page the merchant is sent to; `state` comes back unchanged with the code. */
    pageUrl(input: { redirectUri: string; state: string }): string;
    exchange(code: string): Promise<AuthorizedToken>;
    refresh(refreshToken: string): Promise<AuthorizedToken>;
  };
}

/** A token the channel issued for a merchant that authorised durapay's app. */
export interface AuthorizedToken {
  appAuthToken: string;
  refreshToken: string;
  /** The authorising merchant's user id at the channel (Alipay 2088…). */
  userId: string;
  /** The authorising merchant's own app id, as the channel names it. */
  authAppId: string;
  /** When the token stops working; null when the channel does not say (it is then never refreshed). */
  expiresAt: Date | null;
  /** When the refresh token stops working, when the channel says. */
  refreshExpiresAt: Date | null;
}

// ---- callbacks ----

/** A callback as it arrived: the raw body (signatures cover bytes) and first header values. */
export interface CallbackRequest {
  rawBody: Buffer;
  headers: Record<string, string>;
}

export type CallbackCheck = { ok: true } | { ok: false; reason: string };

/** A verified, decoded channel callback. */
export type ChannelEvent =
  | {
      kind: 'payment';
      eventId: string;
      tradeNo: string;
      status: 'paid' | 'closed';
      channelTradeNo: string | null;
      amount: number;
      currency: string;
      paidAt: Date | null;
      /** The sub-merchant the channel says the payment is for, when it says (WeChat Pay sub_mchid). */
      subMerchantNo?: string;
    }
  | {
      kind: 'refund';
      eventId: string;
      tradeNo: string;
      refundNo: string;
      status: 'success' | 'failed' | 'abnormal';
      channelRefundNo: string | null;
      amount: number;
      reason?: string;
      refundedAt: Date | null;
      subMerchantNo?: string;
    }
  | {
      /** A transfer's new state (WeChat Pay `MCHTRANSFER.BILL.FINISHED`, the sandbox's transfer callback). */
      kind: 'transfer';
      eventId: string;
      transferNo: string;
      state: KnownTransferState;
      /** The amount the channel says it transferred, when it says. */
      amount?: number;
      subMerchantNo?: string;
    };

/**
 * Which of durapay's objects an event is about, by the number the channel's event carries:
 * durapay's trade number (which most channels echo), the channel's own trade number (a channel
 * whose events carry only its own ids), or durapay's refund number (a refund event that names no
 * trade; its order is the refund's).
 */
export type CallbackSubject =
  | { kind: 'trade_no'; tradeNo: string }
  | { kind: 'channel_trade_no'; channelTradeNo: string }
  | { kind: 'refund_no'; refundNo: string }
  | { kind: 'transfer_no'; transferNo: string };

/** Which of our objects an event is about, and the channel's id of the event (for the log). */
export interface CallbackReference {
  eventId: string;
  subject: CallbackSubject;
  /** A refund event's refund, by durapay's number, when the subject names its order. */
  refundNo?: string;
}

/** The reference of an event that names durapay's own numbers, as most channels' events do. */
export function referenceOf(event: ChannelEvent): CallbackReference {
  if (event.kind === 'transfer') {
    return { eventId: event.eventId, subject: { kind: 'transfer_no', transferNo: event.transferNo } };
  }
  return {
    eventId: event.eventId,
    subject: { kind: 'trade_no', tradeNo: event.tradeNo },
    ...(event.kind === 'refund' ? { refundNo: event.refundNo } : {}),
  };
}

/**
 * Why a callback is not taken, for the channel's reply: `unknown`, it names nothing durapay has
 * (a channel that tells this apart from a failure may answer so, and not be asked again).
 */
export type CallbackOutcome = { ok: true } | { ok: false; reason: string; unknown?: boolean };

/** The answer the channel expects: e.g. 200 `success` for the sandbox, 200 `fail` for a refused WeChat Pay callback. */
export interface CallbackReply {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Callback handling in the steps every channel has, each of which may be async (WeChat Pay
 * verifies with a platform certificate it may have to fetch, and decrypts the resource).
 */
export interface CallbacksPort {
  /**
   * The largest callback body the channel sends, in bytes (SPEC §9): a larger one is refused
   * unread past this many bytes and not stored. Absent: 1 MiB, the API's body limit.
   */
  readonly maxBodyBytes?: number;
  /** Is the request from the channel? Never throws for a bad request; says why it is refused. */
  verify(req: CallbackRequest): Promise<CallbackCheck>;
  /** The event in a verified request; a ChannelError('invalid_response') when it is not one. */
  decode(req: CallbackRequest): Promise<ChannelEvent>;
  identify(event: ChannelEvent): CallbackReference;
  /**
   * Confirms a decoded event with the channel, in the context of the order it names (found by
   * `identify`): what only the order's account can ask is asked here, never in `decode`, which
   * knows no order. Alipay's refund notification names the trade's total refunded, not the
   * refund's own amount: the refund is queried, with the merchant's app_auth_token. Answers the
   * event as confirmed; a ChannelError when the channel does not confirm it. A channel whose
   * callbacks carry the whole event leaves it out; the callback route calls it before it
   * compares the event with the order.
   */
  confirm?(ctx: ChannelContext, event: ChannelEvent): Promise<ChannelEvent>;
  /** What to answer when the event was taken (ok) or must be sent again (not ok). */
  reply(outcome: CallbackOutcome): CallbackReply;
  /**
   * The port that takes this request, when a channel sends callbacks in more than one format on
   * one route (WeChat Pay's v2 XML of a 委托代扣 deduction beside its v3 JSON): asked once the
   * body is read, before `verify`. Absent: this port takes every request.
   */
  forRequest?(req: CallbackRequest): CallbacksPort;
}

// ---- statements ----

/**
 * One detail line of a channel's statement, as reconciliation compares it with durapay's books
 * (SPEC §10). Summary lines are not rows.
 */
export interface StatementRow {
  kind: 'payment' | 'refund';
  /** durapay's trade_no: the channel's out_trade_no / 商户订单号. */
  tradeNo: string;
  /** durapay's refund_no on a refund row (out_refund_no / 退款批次号/请求号); null on a payment. */
  refundNo: string | null;
  /** The channel's own number of the payment or the refund (transaction_id / 支付宝交易号 …). */
  channelNo: string | null;
  /** The payment's or the refund's amount in minor units, never negative. */
  amount: number;
  /**
   * The channel's fee on this line in thousandths of a minor unit (WeChat Pay states fees to five
   * decimals of a yuan), signed as the channel states it: a refund gives a fee back (negative).
   */
  fee: number;
  /**
   * What the line says happened: a payment row is `success`; a refund row `success`,
   * `processing` or `failed` (WeChat's 退款状态; an Alipay refund row is `success`).
   */
  status: 'success' | 'processing' | 'failed';
  /** When the channel says it happened (a refund row: when it was accepted or finished). */
  time: Date;
}

/** A statement fetched to a local file, as the channel sent it. */
export type StatementFile =
  /** Not generated yet (WeChat `STATEMENT_CREATING`, Alipay before about 09:00): ask again later. */
  | { status: 'not_ready'; reason: string }
  /** The channel has no statement for the day because nothing happened (`NO_STATEMENT_EXIST`). */
  | { status: 'empty' }
  | {
      status: 'ready';
      /** How `parse` reads the file: the channel's own format. */
      format: string;
      /** Bytes written to the file. */
      size: number;
      /** The hash the channel published for the file's content, when it publishes one (e.g. `SHA1:ab…`). */
      channelHash: string | null;
    };

/**
 * A day's statement of one channel account, for reconciliation (SPEC §10). Files are written to
 * a path the caller gives, never held whole in memory: a statement may hold a million lines.
 */
export interface StatementsPort {
  /**
   * Downloads the statement of one account and day (YYYY-MM-DD, in the channel's time zone) to
   * `path`. A download link that expired before it was used is asked for again.
   */
  fetch(ctx: ChannelContext, day: string, path: string): Promise<StatementFile>;
  /**
   * The statement's detail lines, read from the file `fetch` wrote, streamed. Throws a
   * ChannelError when the file is not what the channel published (e.g. its hash differs).
   */
  parse(path: string, file: Extract<StatementFile, { status: 'ready' }>): AsyncIterable<StatementRow>;
}

// ---- transfers ----

/**
 * Who a transfer pays (SPEC §11): a WeChat user by `openid` (of the service provider's app), an
 * Alipay user by user id (2088…) or by logon id (a phone number or an email, which Alipay wants
 * with the account holder's name).
 */
export interface TransferPayee {
  /** One of the payee kinds the channel's descriptor declares. */
  type: string;
  account: string;
  /**
   * The payee's real name: personal data, sent sealed with the channel's key where the channel
   * seals it (WeChat Pay `user_name`), never logged.
   */
  name?: string;
}

/** WeChat Pay's transfer scene (`transfer_scene_id`) and the report infos the scene requires. */
export interface TransferScene {
  id: string;
  reportInfos: { type: string; content: string }[];
  /** What the user sees the money as (WeChat `user_recv_perception`), when given. */
  userRecvPerception?: string;
}

export interface TransferInput {
  /** durapay's number: the channel's idempotency key (WeChat `out_bill_no`, Alipay `out_biz_no`). */
  transferNo: string;
  amount: number;
  payee: TransferPayee;
  remark: string;
  scene?: TransferScene;
  /** Where the channel posts the transfer's result (durapay's callback endpoint). */
  callbackUrl: string;
}

/**
 * Where a transfer stands at the channel. `wait_user_confirm`: WeChat Pay waits for the payee to
 * confirm in WeChat (`wx.requestMerchantTransfer` with `packageInfo`; a query may answer it empty,
 * as WeChat Pay's does); `cancelling`: a cancel the channel took and has not finished (WeChat
 * `CANCELING`); `cancelled`: cancelled before the money left. A transfer the payee never
 * confirmed is `failed` (WeChat Pay closes it as `FAIL` / `OVERDUE_CLOSE` after 24 h).
 */
export type TransferState =
  | { status: 'processing'; channelTransferNo: string | null }
  | { status: 'wait_user_confirm'; channelTransferNo: string | null; packageInfo: string }
  | { status: 'cancelling'; channelTransferNo: string | null }
  | { status: 'success'; channelTransferNo: string | null; finishedAt: Date }
  | { status: 'failed'; channelTransferNo: string | null; reason: string }
  | { status: 'cancelled'; channelTransferNo: string | null; reason: string | null }
  | { status: 'not_found' };

export type KnownTransferState = Exclude<TransferState, { status: 'not_found' }>;

/** Whether a transfer's state is its last: the money arrived, or it never will. */
export function transferIsFinal(state: TransferState): boolean {
  return state.status === 'success' || state.status === 'failed' || state.status === 'cancelled';
}

/**
 * Payouts from a channel account to a person's wallet (SPEC §11): WeChat Pay 商家转账
 * (`transfer-bills`, the partner form for a sub-merchant), Alipay `alipay.fund.trans.uni.transfer`.
 * Every call names durapay's transfer number, which the channel keeps unique per account: a
 * create sent again with the same number never pays twice.
 *
 * `create` answers the state the channel accepted the transfer in; it throws ChannelError
 * ('refused') when the channel refused it (nothing was paid), and ('unreachable' | 'timeout' |
 * 'invalid_response') when the outcome is unknown: the caller then asks `query`, never sends it
 * again under a new number.
 */
export interface TransfersPort {
  /** The smallest amount the channel transfers, in minor units (WeChat Pay and Alipay: 0.10 yuan). */
  readonly minAmount: number;
  /** The payee types the channel pays. */
  readonly payeeTypes: readonly TransferPayee['type'][];
  /**
   * Why the channel would refuse this transfer as asked, naming the field (`payee.name: is
   * required from 2000.00 yuan`), before anything is recorded; undefined when nothing is wrong.
   */
  problemWith?(input: Omit<TransferInput, 'transferNo' | 'callbackUrl'>): string | undefined;
  create(ctx: ChannelContext, input: TransferInput): Promise<KnownTransferState>;
  query(ctx: ChannelContext, transferNo: string): Promise<TransferState>;
  /**
   * Asks the channel to cancel a transfer the payee has not received yet; answers its state after
   * the request (`cancelling` or `cancelled`, or what it is when too late: a ChannelError('refused')
   * with the channel's reason when the channel will not cancel it). A channel that cannot cancel
   * transfers leaves it out.
   */
  cancel?(ctx: ChannelContext, transferNo: string): Promise<TransferState>;
}

/**
 * A buyer's identity at the channel from its wallet's silent web sign-in (SPEC §15): WeChat's
 * OAuth `snsapi_base` (an openid of the service provider's app), Alipay's `auth_base` (a
 * buyer_id). The hosted checkout sends the buyer's browser to `authorizeUrl`; the wallet brings
 * it back to `redirectUri` with a one-time code and the state; `buyerOf` exchanges the code.
 */
export interface BuyerSignInPort {
  /** Whether a user agent is this channel's wallet (its in-app browser). */
  isWallet(userAgent: string): boolean;
  authorizeUrl(p: { redirectUri: string; state: string }): string;
  /** The one-time code in the query the wallet came back with; undefined when it brought none. */
  codeOf(query: Record<string, unknown>): string | undefined;
  /**
   * The buyer the code names, as the `extra` of a `jsapi` create at this channel takes it
   * (`{sp_openid}`, `{buyer_id}`). A code unknown, used or expired: ChannelError('refused').
   */
  buyerOf(code: string): Promise<{ buyer: string; extra: Record<string, string> }>;
}

/** A consumer complaint as the channel holds it (WeChat Pay 消费者投诉2.0, Alipay 交易投诉). */
export interface ChannelComplaint {
  complaintId: string;
  state: 'pending' | 'processing' | 'processed';
  complainedAt: Date;
  /** The payer's words. */
  detail: string;
  /** The merchant complained about (WeChat Pay's complainted_mchid). */
  subMerchantNo: string;
  /** The orders it names, by durapay's number (the channel's out_trade_no). */
  orders: { tradeNo: string; channelTradeNo: string; amount: number }[];
  /** `refund`, `service_not_work` or `other`. */
  problemType: 'refund' | 'service_not_work' | 'other';
  /** What the payer asks back, in minor units, for a refund request. */
  applyRefundAmount?: number;
  /** The payer's phone, opened: personal data, to be sealed by whoever keeps it. */
  payerPhone?: string;
  fullRefunded: boolean;
  /** How many times the payer has complained about it (a continued complaint counts again). */
  complaintTimes: number;
  /** A word of the payer's not answered yet. */
  awaitsReply: boolean;
  /** The payer's images, as the channel serves them (fetched with `image`). */
  imageUrls: string[];
}

/** One step of a complaint's negotiation history, oldest first. */
export interface ComplaintStep {
  id: string;
  operator: string;
  at: Date;
  /** The channel's operate_type (USER_CREATE_COMPLAINT, MERCHANT_RESPONSE, …). */
  type: string;
  details: string;
  imageUrls: string[];
}

/**
 * A channel's consumer complaints (SPEC §16): the channel tells durapay of each change on a
 * notification URL it registers once, and lists recent complaints for what a lost notification
 * did not say. Replies and completion are the merchant's answers; a refund is an ordinary refund
 * of the order (RefundsPort), which the channel sees for itself.
 */
export interface ComplaintsPort {
  /**
   * Registers (or moves) the URL the channel posts its complaint notifications to. A channel
   * whose URL is set in its own console (Alipay's app gateway) has none.
   */
  registerNotifyUrl?(url: string): Promise<void>;
  /** The complaints made from `fromDay` to `toDay` (YYYY-MM-DD, the channel's days), every page. */
  list(fromDay: string, toDay: string): Promise<ChannelComplaint[]>;
  /** The complaint, or undefined when the channel has none of that id. */
  get(complaintId: string): Promise<ChannelComplaint | undefined>;
  history(complaintId: string): Promise<ComplaintStep[]>;
  /** An image for a reply: the channel's id of it. */
  uploadImage(content: Buffer, filename: string): Promise<string>;
  reply(
    complaint: { complaintId: string; subMerchantNo: string },
    content: string,
    imageIds: string[],
  ): Promise<void>;
  complete(complaint: { complaintId: string; subMerchantNo: string }): Promise<void>;
  /**
   * A refund request (problem type `refund`) the merchant has refunded, approved at the channel
   * (WeChat Pay 更新退款审批结果 APPROVE, the refund already launched). A channel without such a
   * step has none.
   */
  approveRefund?(complaint: { complaintId: string }): Promise<void>;
  /** An image the channel serves (a payer's, a step's): its bytes and type. */
  image(url: string): Promise<{ content: Buffer; contentType: string }>;
  /**
   * A complaint notification, its signature verified first: which complaint changed and how
   * (the channel's action_type). A notification that does not verify: ChannelError('invalid_response').
   */
  decodeNotification(req: CallbackRequest): Promise<{ eventId: string; complaintId: string; action: string }>;
}

// ---- recurring contracts ----

/** A contract's plan as the channel's sign page shows it (SPEC §17); times in the contract's clock. */
export interface ContractSignInput {
  /** durapay's number of the contract: the channel's idempotency key (WeChat `contract_code`, Alipay `external_agreement_no`). */
  contractNo: string;
  subject: string;
  plan: { period: 'day' | 'week' | 'month'; every: number; amount: number };
  /** Where the channel posts the signing, the buyer's unsigning and the contract's end. */
  notifyUrl: string;
  /** Where the buyer's browser goes after signing. */
  returnUrl?: string;
}

/**
 * A deduction under a signed contract (SPEC §17): an ordinary order at the channel (its own
 * trade number), taken without the buyer (WeChat Pay `pappayapply`, Alipay `alipay.trade.pay`
 * with `agreement_params`).
 */
export interface ContractDeductionInput {
  tradeNo: string;
  amount: number;
  subject: string;
  /** The channel's id of the contract (WeChat `contract_id`, Alipay `agreement_no`). */
  channelContractId: string;
  callbackUrl: string;
}

/** Where a contract stands at the channel (a notification lost is found by asking). */
export type ContractState =
  | { status: 'signing' }
  | { status: 'active'; channelContractId: string; signedAt: Date }
  | { status: 'terminated'; channelContractId: string | null; by: 'buyer' | 'merchant'; at: Date }
  | { status: 'not_found' };

/** What the channel says happened to a contract: signed, or ended (unsigned) by the buyer or the merchant. */
export type ContractEvent =
  | { kind: 'signed'; contractNo: string; channelContractId: string; at: Date }
  | { kind: 'terminated'; contractNo: string; channelContractId: string; by: 'buyer' | 'merchant'; at: Date };

/**
 * Auto-debit contracts (WeChat Pay 委托代扣, Alipay 周期扣款): a page where the buyer signs,
 * deductions made without the buyer, the pre-deduction notice where the channel wants one, and
 * unsigning. `deduct` answers like a barcode payment (`paid`, or `paying` while the channel takes
 * it; ChannelError('refused') with the channel's reason when it will not; no answer:
 * 'unreachable' | 'timeout', whether money was taken unknown, so the deduction is reversed).
 */
export interface ContractsPort {
  /** The channel's deduction window in its local day, and how far ahead its notice must go (none: no notice). */
  readonly window: { startMinute: number; endMinute: number; utcOffsetMinutes: number };
  readonly noticeLeadMs: number | null;
  /** The page where the buyer signs; asked again with the same number, the same contract's page. */
  signUrl(ctx: ChannelContext, input: ContractSignInput): Promise<string>;
  /** Tells the buyer of the coming deduction (WeChat Pay 预扣费通知); the deduction may not exceed `amount`. */
  notice?(ctx: ChannelContext, input: { channelContractId: string; amount: number }): Promise<void>;
  deduct(ctx: CreateContext, input: ContractDeductionInput): Promise<BarcodeAnswer>;
  /** Gives back or closes a deduction whose answer was lost or that was not taken in time. */
  reverse(ctx: TradeContext, tradeNo: string): Promise<ReverseAnswer>;
  query(ctx: ChannelContext, contractNo: string): Promise<ContractState>;
  /** Unsigns: the channel takes no deduction under it afterwards. Unsigning one already ended answers as done. */
  terminate(
    ctx: ChannelContext,
    input: { contractNo: string; channelContractId: string | null; reason: string },
  ): Promise<void>;
  /** A contract notification, its signature verified first; one that does not verify: ChannelError('invalid_response'). */
  decodeNotification(req: CallbackRequest): Promise<ContractEvent>;
  /** The reply the channel expects to a notification taken (ok) or not. */
  reply(outcome: CallbackOutcome): CallbackReply;
}

// ---- the channel ----

export interface Channel {
  readonly code: string;
  readonly capabilities: ChannelCapabilities;
  readonly payments: PaymentsPort;
  readonly refunds?: RefundsPort;
  readonly profitSharing?: ProfitSharingPort;
  readonly onboarding?: OnboardingPort;
  readonly accounts?: AccountsPort;
  readonly callbacks?: CallbacksPort;
  readonly statements?: StatementsPort;
  readonly transfers?: TransfersPort;
  readonly barcode?: BarcodePort;
  readonly buyerSignIn?: BuyerSignInPort;
  readonly complaints?: ComplaintsPort;
  readonly contracts?: ContractsPort;
}

export type ChannelPortName = Exclude<keyof Channel, 'code' | 'capabilities' | 'payments'>;

const PORT_WORDS: Record<ChannelPortName, string> = {
  refunds: 'refunds',
  profitSharing: 'profit sharing',
  onboarding: 'onboarding',
  accounts: 'merchant accounts',
  callbacks: 'callbacks',
  statements: 'statements',
  transfers: 'transfers',
  barcode: 'barcode payments',
  buyerSignIn: 'buyer sign-in',
  complaints: 'consumer complaints',
  contracts: 'recurring contracts',
};

/** The channel's port for a capability, or a ChannelError('not_supported') naming what is missing. */
export function portOf<K extends ChannelPortName>(channel: Channel, name: K): NonNullable<Channel[K]> {
  const port = channel[name];
  if (port === undefined) {
    throw new ChannelError('not_supported', `channel ${channel.code} does not support ${PORT_WORDS[name]}`);
  }
  return port as NonNullable<Channel[K]>;
}

// ---- building a channel ----

/**
 * A channel's adapters, one per configured account (e.g. several WeChat Pay merchant ids). The
 * registry builds every account's adapter at start, so a bad configuration fails the boot.
 */
export interface ChannelFactory {
  readonly code: string;
  /** The configured accounts' names; the first is the default. */
  readonly accounts: readonly string[];
  create(account: string): Channel;
}

/**
 * What a channel reads of durapay's core configuration (platform/config.ts's Config has it all):
 * channels say what they need here rather than import the configuration that lists them.
 */
export interface ChannelCoreConfig {
  api: { requestTimeoutMs: number };
  sandbox: { enabled: boolean; secret?: string; baseUrl: string; maxAmount: number };
}

/**
 * A channel's own settings: their variables' schema, which the configuration validates with
 * every other variable, and their reading (undefined: the channel is not configured).
 */
export interface ChannelSettings<S> {
  schema: Record<string, Schema>;
  read(str: SettingReader, cwd: string): S | undefined;
}

/**
 * A channel as the registry lists it, one line each (declared with `satisfies`, so that its
 * account kinds and payee types stay literal for the types derived from the registry): its code, its own settings when it has any
 * (read into the configuration under its code), and its adapters from the configuration.
 */
export interface ChannelDescriptor<Code extends string = string, S = never> {
  readonly code: Code;
  /** Its name for people: `WeChat Pay`. */
  readonly label: string;
  /**
   * The accounts its merchants have there (SPEC §5.8): what the attach body, the account's view,
   * the OpenAPI document, the SDK and the console name them by. Absent: no merchant accounts.
   */
  readonly accounts?: ChannelAccountsDeclaration;
  /** Whom its transfers pay (SPEC §11), when it has transfers. */
  readonly payees?: readonly PayeeKindDeclaration[];
  /**
   * The buyer codes of its wallet it takes for barcode payments (SPEC §14), when it has them:
   * an order without `channel_code` goes to the channel whose pattern its `auth_code` matches.
   */
  readonly authCodes?: RegExp;
  readonly settings?: ChannelSettings<S>;
  /** Where its settings point and with which account, for the start banner: `https://… (sp_mchid 1900000109)`. */
  describe?(settings: S): string;
  fromConfig(core: ChannelCoreConfig, settings: S | undefined, masterKey: Buffer): ChannelFactory | undefined;
}
