/** A consumer complaint as durapay keeps it (SPEC §16). */
export interface Complaint {
  channelCode: string;
  complaintId: string;
  account: string;
  /** The app and order it names; null when durapay has no such order (kept and flagged). */
  appId: string | null;
  merchantId: string | null;
  tradeNo: string | null;
  /** The order number as the channel named it. */
  outTradeNo: string | null;
  channelTradeNo: string | null;
  orderAmount: number | null;
  subMerchantNo: string;
  state: 'pending' | 'processing' | 'processed';
  problemType: 'refund' | 'service_not_work' | 'other';
  applyRefundAmount: number | null;
  /** Personal data, sealed at rest. */
  detail: string;
  payerPhone: string | null;
  images: string[];
  history: ComplaintStepView[];
  complaintTimes: number;
  awaitsReply: boolean;
  fullRefunded: boolean;
  complainedAt: Date;
  replyDueAt: Date;
  completeDueAt: Date;
  repliedAt: Date | null;
  completedAt: Date | null;
  refundNo: string | null;
  refundAmount: number | null;
  replyDueNotifiedAt: Date | null;
  overdueAt: Date | null;
  version: number;
  /** The event a change owes the app and the version it carries, until published. */
  unpublished: { event: 'created' | 'updated'; version: number } | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One step of the negotiation, as kept (its images are the channel's; counted here). */
export interface ComplaintStepView {
  id: string;
  operator: string;
  at: string;
  type: string;
  details: string;
  image_count: number;
}

export interface ComplaintActionRow {
  actor: string;
  action: 'reply' | 'refund' | 'complete';
  outcome: 'done' | 'repeated' | 'refused';
  detail: Record<string, unknown>;
  at: Date;
}
