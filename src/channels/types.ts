/**
 * The one interface every upstream payment channel implements (STYLE: one folder per channel,
 * wire formats in its transformers.ts, signing in its signature.ts). Every call carries
 * durapay's own reference (trade_no, refund_no, share_no, application_id), which the channel
 * treats as an idempotency key: a retried activity never creates a second upstream object.
 */

export const PAY_METHODS = ['qr_code', 'jsapi', 'mini_program', 'app', 'h5', 'web'] as const;
export type PayMethod = (typeof PAY_METHODS)[number];

export interface ChannelCapabilities {
  payMethods: readonly PayMethod[];
  profitSharing: boolean;
  onboarding: boolean;
  /** Largest amount the channel accepts, in minor units. */
  maxAmount: number;
  currency: string;
  /**
   * The shape of the file ids the channel assigns to uploads, when it has one: a text of this
   * shape in an application's submit_data is a file reference, uploaded or not.
   */
  fileIdPattern?: RegExp;
}

/** Why a channel call did not succeed; activities map it to the SPEC's error codes. */
export type ChannelErrorKind = 'refused' | 'unreachable' | 'timeout' | 'not_supported' | 'invalid_response';

export class ChannelError extends Error {
  override name = 'ChannelError';
  constructor(
    readonly kind: ChannelErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export interface CreatePaymentInput {
  tradeNo: string;
  amount: number;
  currency: string;
  payMethod: PayMethod;
  subject: string;
  expireAt: Date;
  /** Where the channel posts its asynchronous results (our callback endpoint). */
  callbackUrl: string;
  extra?: Record<string, unknown>;
  subMerchantNo?: string;
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

export interface RefundInput {
  tradeNo: string;
  refundNo: string;
  amount: number;
  totalAmount: number;
  reason?: string;
  callbackUrl: string;
}

export type RefundState =
  | { status: 'processing'; channelRefundNo: string | null }
  | { status: 'success'; channelRefundNo: string | null; refundedAt: Date }
  | { status: 'failed'; channelRefundNo: string | null; reason: string }
  | { status: 'not_found' };

export interface ProfitShareInput {
  tradeNo: string;
  shareNo: string;
  receivers: { type: string; account: string; name?: string; amount: number }[];
}

export type ProfitShareState =
  { status: 'processing' } | { status: 'finished' } | { status: 'failed'; reason: string };

/** A verified, parsed channel callback. */
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
    }
  | {
      kind: 'refund';
      eventId: string;
      tradeNo: string;
      refundNo: string;
      status: 'success' | 'failed';
      channelRefundNo: string | null;
      amount: number;
      reason?: string;
      refundedAt: Date | null;
    };

export type CallbackResult = { ok: true; event: ChannelEvent; ack: string } | { ok: false; reason: string };

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

export type ApplicationStatus =
  'submitted' | 'auditing' | 'to_be_confirmed' | 'to_be_signed' | 'finished' | 'rejected' | 'canceled';

export interface ApplicationState {
  status: ApplicationStatus;
  channelApplicationNo: string | null;
  subMerchantNo: string | null;
  signUrl: string | null;
  rejectReason: string | null;
  detail: Record<string, unknown>;
}

export interface Channel {
  readonly code: string;
  readonly capabilities: ChannelCapabilities;
  createPayment(input: CreatePaymentInput): Promise<CreatePaymentResult>;
  queryPayment(tradeNo: string): Promise<PaymentState>;
  /** Closes an unpaid order; reports `paid` when the buyer paid first. */
  closePayment(tradeNo: string): Promise<PaymentState>;
  refund(input: RefundInput): Promise<RefundState>;
  queryRefund(refundNo: string): Promise<RefundState>;
  profitShare(input: ProfitShareInput): Promise<ProfitShareState>;
  /** Verifies and parses a callback; `ack` is the body the channel expects on success. */
  parseCallback(rawBody: Buffer, headers: Record<string, string>): CallbackResult;
  uploadFile(input: UploadFileInput): Promise<{ fileId: string }>;
  submitApplication(input: SubmitApplicationInput): Promise<ApplicationState>;
  queryApplication(applicationId: string): Promise<ApplicationState>;
}
