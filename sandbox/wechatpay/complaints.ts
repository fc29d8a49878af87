/**
 * The sandbox's consumer complaints (消费者投诉2.0, service provider): a payer's complaint about a
 * paid order of one of this service provider's sub-merchants, its negotiation history, and the
 * moves WeChat Pay publishes — the first reply of the merchant takes it from PENDING to
 * PROCESSING, the merchant's completion, or a refund request it rejects, to PROCESSED; a payer who
 * complains again brings it back to PENDING. Each change is pushed to the service provider's
 * complaint notification URL (COMPLAINT.CREATE, COMPLAINT.STATE_CHANGE with its action_type),
 * sealed and signed as payment callbacks are. Kept in memory, like the orders.
 *
 * Its routes are in complaint-routes.ts. A test opens complaints and speaks as the payer.
 */
import { constants, publicEncrypt, randomUUID, type KeyObject } from 'node:crypto';
import type { SandboxContext } from './context';
import { paramError } from './http';
import type { OrderRecord } from './store';
import { WechatpayError, randomDigits, rfc3339Cst } from './wire';

export type ComplaintState = 'PENDING' | 'PROCESSING' | 'PROCESSED';
export type ProblemType = 'REFUND' | 'SERVICE_NOT_WORK' | 'OTHERS';

export interface NegotiationEntry {
  log_id: string;
  operator: string;
  operate_time: string;
  operate_type: string;
  operate_details: string;
  image_list: string[];
}

export interface ComplaintRecord {
  complaintId: string;
  /** The sub-merchant complained about (the order's sub_mchid). */
  complaintedMchid: string;
  spMchid: string;
  order: OrderRecord;
  createdAt: number;
  detail: string;
  problemType: ProblemType;
  applyRefundAmount?: number;
  /** The payer's phone, in the clear here; sealed with the merchant's key in every answer. */
  payerPhone: string;
  state: ComplaintState;
  userComplaintTimes: number;
  incomingUserResponse: boolean;
  fullRefunded: boolean;
  mediaIds: string[];
  history: NegotiationEntry[];
  /** Calls that reached WeChat Pay for this complaint, refused ones included: a test counts them. */
  calls: { response: number; complete: number; refundProgress: number };
}

/** What opening a complaint may say; the rest is made up as a payer would. */
export interface OpenComplaint {
  detail?: string;
  problemType?: ProblemType;
  applyRefundAmount?: number;
  payerPhone?: string;
  /** Images the payer attached (PNG or JPEG bytes). */
  images?: Buffer[];
  /** The notification is lost: only the list finds the complaint. */
  lostNotification?: boolean;
}

const IMAGE_MAGIC = [
  { type: 'image/png', magic: Buffer.from([0x89, 0x50, 0x4e, 0x47]) },
  { type: 'image/jpeg', magic: Buffer.from([0xff, 0xd8, 0xff]) },
  { type: 'image/bmp', magic: Buffer.from([0x42, 0x4d]) },
];

export interface ComplaintDeskDeps {
  ctx: SandboxContext;
  /** Where this router is reached: media URLs point under it. */
  base: string;
  /** The merchant's public key, which seals payer_phone (the merchant opens it with its private key). */
  merchantKey: KeyObject;
  /** Posts a COMPLAINT.* notification to the URL (signed and sealed as a payment callback). */
  notify(url: string, eventType: string, summary: string, plaintext: Record<string, unknown>): void;
}

export class ComplaintDesk {
  private readonly complaints = new Map<string, ComplaintRecord>();
  /** One notification URL per service provider, as WeChat Pay keeps it. */
  private readonly notifyUrls = new Map<string, string>();
  private readonly images = new Map<string, { bytes: Buffer; type: string }>();

  constructor(private readonly deps: ComplaintDeskDeps) {}

  find(complaintId: string): ComplaintRecord | undefined {
    return this.complaints.get(complaintId);
  }

  all(): ComplaintRecord[] {
    return [...this.complaints.values()];
  }

  notifyUrlOf(spMchid: string): string | undefined {
    return this.notifyUrls.get(spMchid);
  }

  setNotifyUrl(spMchid: string, url: string | undefined): void {
    if (url === undefined) this.notifyUrls.delete(spMchid);
    else this.notifyUrls.set(spMchid, url);
  }

  storeImage(bytes: Buffer): string {
    const type = IMAGE_MAGIC.find((m) => bytes.subarray(0, m.magic.length).equals(m.magic))?.type;
    if (!type) throw paramError('只支持JPG、BMP、PNG格式的图片');
    const mediaId = `ms${randomUUID().replace(/-/g, '')}`;
    this.images.set(mediaId, { bytes, type });
    return mediaId;
  }

  image(mediaId: string): { bytes: Buffer; type: string } | undefined {
    return this.images.get(mediaId);
  }

  mediaUrl(mediaId: string): string {
    return `${this.deps.base}/v3/merchant-service/images/${mediaId}`;
  }

  private log(c: ComplaintRecord, operator: string, type: string, details: string, images: string[] = []) {
    c.history.push({
      log_id: `3002853${randomDigits(20)}`,
      operator,
      operate_time: rfc3339Cst(Date.now()),
      operate_type: type,
      operate_details: details,
      image_list: images.map((id) => this.mediaUrl(id)),
    });
  }

  private push(c: ComplaintRecord, eventType: 'COMPLAINT.CREATE' | 'COMPLAINT.STATE_CHANGE', action: string) {
    const url = this.notifyUrls.get(c.spMchid);
    if (url === undefined) {
      this.deps.ctx.logger.info('wechatpay sandbox complaint has no notification URL: no callback', {
        complaint_id: c.complaintId,
        action_type: action,
      });
      return;
    }
    this.deps.notify(url, eventType, eventType === 'COMPLAINT.CREATE' ? '产生新投诉' : '投诉状态变化', {
      complaint_id: c.complaintId,
      action_type: action,
    });
  }

  /** A payer complains about a paid order (用户提交投诉). */
  open(order: OrderRecord, o: OpenComplaint = {}): ComplaintRecord {
    if (order.state !== 'SUCCESS' && order.state !== 'REFUND') {
      throw new Error(
        `order ${order.request.out_trade_no} is ${order.state}: only a paid order is complained about`,
      );
    }
    const now = Date.now();
    const day = rfc3339Cst(now).slice(0, 10).replace(/-/g, '');
    const c: ComplaintRecord = {
      complaintId: `2002018${day}${randomDigits(12)}`,
      complaintedMchid: order.request.sub_mchid,
      spMchid: order.request.sp_mchid,
      order,
      createdAt: now,
      detail: o.detail ?? '商品与描述不符，申请退款',
      problemType: o.problemType ?? 'REFUND',
      ...(o.problemType === 'REFUND' || o.problemType === undefined
        ? { applyRefundAmount: o.applyRefundAmount ?? order.request.amount.total }
        : {}),
      payerPhone: o.payerPhone ?? `1${randomDigits(10)}`,
      state: 'PENDING',
      userComplaintTimes: 1,
      incomingUserResponse: false,
      fullRefunded: false,
      mediaIds: (o.images ?? []).map((b) => this.storeImage(b)),
      history: [],
      calls: { response: 0, complete: 0, refundProgress: 0 },
    };
    this.complaints.set(c.complaintId, c);
    this.log(c, '投诉人', 'USER_CREATE_COMPLAINT', c.detail, c.mediaIds);
    if (o.lostNotification) {
      this.deps.ctx.logger.info('wechatpay sandbox complaint notification dropped (fault injection)', {
        complaint_id: c.complaintId,
      });
    } else {
      this.push(c, 'COMPLAINT.CREATE', 'CREATE_COMPLAINT');
    }
    return c;
  }

  /** The payer writes again (用户新留言). */
  userResponds(c: ComplaintRecord, text: string): void {
    c.incomingUserResponse = true;
    this.log(c, '投诉人', 'USER_RESPONSE', text);
    this.push(c, 'COMPLAINT.STATE_CHANGE', 'USER_RESPONSE');
  }

  /** The payer complains again about a complaint the merchant finished (用户继续投诉). */
  continues(c: ComplaintRecord, text: string): void {
    c.userComplaintTimes += 1;
    c.state = 'PENDING';
    this.log(c, '投诉人', 'USER_CONTINUE_COMPLAINT', text);
    this.push(c, 'COMPLAINT.STATE_CHANGE', 'CONTINUE_COMPLAINT');
  }

  /** The merchant's reply: its first one takes the complaint to PROCESSING. */
  respond(c: ComplaintRecord, content: string, images: string[]): void {
    if (c.state === 'PROCESSED')
      throw new WechatpayError(400, 'INVALID_REQUEST', '投诉单已处理完成，不能回复');
    if (c.state === 'PENDING') c.state = 'PROCESSING';
    c.incomingUserResponse = false;
    this.log(c, '商户', 'MERCHANT_RESPONSE', content, images);
    this.push(c, 'COMPLAINT.STATE_CHANGE', 'MERCHANT_RESPONSE');
  }

  /** The merchant says it has dealt with the complaint (反馈处理完成): PROCESSED. */
  complete(c: ComplaintRecord): void {
    if (c.state === 'PROCESSED')
      throw new WechatpayError(400, 'INVALID_REQUEST', '投诉单已处理完成，无需重复操作');
    c.state = 'PROCESSED';
    this.log(c, '商户', 'MERCHANT_CONFIRM_COMPLETE', '商户反馈已处理完成');
    this.push(c, 'COMPLAINT.STATE_CHANGE', 'MERCHANT_CONFIRM_COMPLETE');
  }

  /** The merchant approves (the refund is its own to make) or rejects (PROCESSED) a refund request. */
  refundProgress(c: ComplaintRecord, action: 'APPROVE' | 'REJECT', reason?: string): void {
    if (c.problemType !== 'REFUND') throw new WechatpayError(400, 'INVALID_REQUEST', '该投诉单不是退款申请');
    if (c.state === 'PROCESSED') throw new WechatpayError(400, 'INVALID_REQUEST', '投诉单已处理完成');
    if (action === 'APPROVE') {
      this.log(c, '商户', 'MERCHANT_APPROVE_REFUND', '商户同意退款');
      this.push(c, 'COMPLAINT.STATE_CHANGE', 'MERCHANT_APPROVE_REFUND');
      return;
    }
    c.state = 'PROCESSED';
    this.log(c, '商户', 'MERCHANT_REFUSE_RERUND', reason ?? '');
    this.push(c, 'COMPLAINT.STATE_CHANGE', 'MERCHANT_REJECT_REFUND');
  }

  /** A refund of the complained order reached the payer: recorded, and (in full) the complaint ends. */
  refunded(order: OrderRecord, fully: boolean): void {
    for (const c of this.complaints.values()) {
      if (c.order !== order || c.state === 'PROCESSED') continue;
      if (fully) {
        c.fullRefunded = true;
        c.state = 'PROCESSED';
        this.log(c, '系统', 'COMPLAINT_FULL_REFUNDED_SYSTEM_MESSAGE', '商户已全额退款');
      } else {
        this.log(c, '系统', 'COMPLAINT_PARTIAL_REFUNDED_SYSTEM_MESSAGE', '商户已部分退款');
      }
      this.push(c, 'COMPLAINT.STATE_CHANGE', 'REFUND_SUCCESS');
    }
  }

  /** The complaint as the list and the detail show it (the detail adds payer_openid). */
  view(c: ComplaintRecord, detail: boolean): Record<string, unknown> {
    const order = c.order;
    return {
      complaint_id: c.complaintId,
      complaint_time: rfc3339Cst(c.createdAt),
      complaint_detail: c.detail,
      complainted_mchid: c.complaintedMchid,
      complaint_state: c.state,
      payer_phone: publicEncrypt(
        { key: this.deps.merchantKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
        Buffer.from(c.payerPhone, 'utf8'),
      ).toString('base64'),
      ...(detail && order.payer?.sp_openid ? { payer_openid: order.payer.sp_openid } : {}),
      complaint_order_info: [
        {
          transaction_id: order.transactionId ?? '',
          out_trade_no: order.request.out_trade_no,
          amount: order.request.amount.total,
        },
      ],
      complaint_full_refunded: c.fullRefunded,
      incoming_user_response: c.incomingUserResponse,
      user_complaint_times: c.userComplaintTimes,
      complaint_media_list: c.mediaIds.length
        ? [{ media_type: 'USER_COMPLAINT_IMAGE', media_url: c.mediaIds.map((id) => this.mediaUrl(id)) }]
        : [],
      problem_description: c.detail,
      problem_type: c.problemType,
      ...(c.applyRefundAmount === undefined ? {} : { apply_refund_amount: c.applyRefundAmount }),
      user_tag_list: [],
      service_order_info: [],
      in_platform_service: false,
      need_immediate_service: false,
    };
  }
}
