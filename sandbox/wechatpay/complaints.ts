/**
 * The sandbox's consumer complaints (消费者投诉2.0, service provider): a payer's complaint about a
 * paid order of one of this service provider's sub-merchants, its negotiation history, and the
 * moves WeChat Pay publishes — the first reply of the merchant takes it from PENDING to
 * PROCESSING, the merchant's completion, or a refund request it rejects, to PROCESSED; a payer who
 * complains again brings it back to PENDING. Each change is pushed to the service provider's
 * complaint notification URL (COMPLAINT.CREATE, COMPLAINT.STATE_CHANGE with its action_type),
 * sealed and signed as payment callbacks are. Kept in memory, like the orders.
 *
 * The routes (complaintRoutes) answer the published API: the list (a span of at most 30 days,
 * at most 50 a page), the detail, the negotiation history, the reply, the completion, the refund
 * approval, the notification URL's create, read, update and delete, and the image upload and
 * download the replies use. A test (or the sandbox's control) opens complaints and speaks as
 * the payer.
 */
import { constants, createHash, publicEncrypt, randomUUID, type KeyObject } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { readMediaForm, type MediaForm } from './applyment';
import type { SandboxContext } from './context';
import { jsonBody, paramError, validate } from './http';
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

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const MAX_SPAN_DAYS = 30;

const listQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(50),
  offset: Joi.number().integer().min(0),
  begin_date: Joi.string().pattern(DATE).required(),
  end_date: Joi.string().pattern(DATE).required(),
  complainted_mchid: Joi.string().min(1).max(64),
});

const historyQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(300),
  offset: Joi.number().integer().min(0),
});

const responseBody = Joi.object({
  complainted_mchid: Joi.string().min(1).max(64).required(),
  response_content: Joi.string().min(1).max(500).required(),
  response_images: Joi.array().items(Joi.string().min(1).max(512)).max(4),
  jump_url: Joi.string()
    .max(512)
    .pattern(/^https:\/\//),
  jump_url_text: Joi.string().max(10),
  mini_program_jump_info: Joi.object({
    appid: Joi.string().required(),
    path: Joi.string().required(),
    text: Joi.string().required(),
  }),
}).with('jump_url', 'jump_url_text');

const completeBody = Joi.object({ complainted_mchid: Joi.string().min(1).max(64).required() });

const refundProgressBody = Joi.object({
  action: Joi.string().valid('APPROVE', 'REJECT').required(),
  launch_refund_day: Joi.number().integer().min(0),
  reject_reason: Joi.string().max(200),
  reject_media_list: Joi.array().items(Joi.string()).max(4),
  remark: Joi.string().max(200),
});

/**
 * HTTPS, as WeChat Pay asks of a notification URL; plain HTTP to this machine's own loopback is
 * taken too, so that the offline world (all on one machine) can be reached.
 */
const notifyUrlBody = Joi.object({
  url: Joi.string()
    .max(255)
    .uri({ scheme: ['https', 'http'] })
    .required(),
});

function isReachable(url: string): boolean {
  const u = new URL(url);
  return u.protocol === 'https:' || ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

/** The day (YYYY-MM-DD, China time) a complaint was made on. */
const dayOf = (ms: number) => rfc3339Cst(ms).slice(0, 10);

function numberQuery(req: Request): Record<string, unknown> {
  const q = { ...(req.query as Record<string, unknown>) };
  for (const key of ['limit', 'offset']) {
    if (typeof q[key] === 'string' && /^\d+$/.test(q[key] as string)) q[key] = Number(q[key]);
  }
  return q;
}

export function complaintRoutes(router: Router, ctx: SandboxContext, desk: ComplaintDesk): void {
  const { answer } = ctx;
  const BASE = '/v3/merchant-service/complaints-v2';

  /** The complaint, if this service provider's; a complaint of another's is NO_AUTH. */
  function complaintOf(req: Request, res: Response): ComplaintRecord {
    const c = desk.find(String(req.params.complaint_id));
    if (!c) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '投诉单不存在');
    if (c.spMchid !== String(res.locals.mchid)) {
      throw new WechatpayError(403, 'NO_AUTH', '您暂无权限查询该投诉单的信息');
    }
    return c;
  }

  function sameMerchant(c: ComplaintRecord, complaintedMchid: string): void {
    if (c.complaintedMchid !== complaintedMchid) {
      throw paramError(
        `complainted_mchid ${complaintedMchid} is not the merchant of complaint ${c.complaintId}`,
      );
    }
  }

  router.get(BASE, (req, res) => {
    const q = validate(listQuery, numberQuery(req));
    const begin = Date.parse(`${q.begin_date}T00:00:00+08:00`);
    const end = Date.parse(`${q.end_date}T00:00:00+08:00`);
    if (Number.isNaN(begin) || Number.isNaN(end) || end < begin) {
      throw paramError('begin_date must be a date no later than end_date');
    }
    if ((end - begin) / 86_400_000 > MAX_SPAN_DAYS) throw paramError('查询日期跨度不能超过30天');
    const mchid = String(res.locals.mchid);
    const found = desk
      .all()
      .filter(
        (c) =>
          c.spMchid === mchid &&
          dayOf(c.createdAt) >= q.begin_date &&
          dayOf(c.createdAt) <= q.end_date &&
          (q.complainted_mchid === undefined || c.complaintedMchid === q.complainted_mchid),
      )
      .sort((a, b) => b.createdAt - a.createdAt);
    const limit = q.limit ?? 10;
    const offset = q.offset ?? 0;
    answer(res, 200, {
      data: found.slice(offset, offset + limit).map((c) => desk.view(c, false)),
      limit,
      offset,
      ...(offset === 0 ? { total_count: found.length } : {}),
    });
  });

  router.get(`${BASE}/:complaint_id`, (req, res) => {
    answer(res, 200, desk.view(complaintOf(req, res), true));
  });

  router.get(`${BASE}/:complaint_id/negotiation-historys`, (req, res) => {
    const c = complaintOf(req, res);
    const q = validate(historyQuery, numberQuery(req));
    const limit = q.limit ?? 100;
    const offset = q.offset ?? 0;
    answer(res, 200, {
      data: c.history.slice(offset, offset + limit),
      limit,
      offset,
      ...(offset === 0 ? { total_count: c.history.length } : {}),
    });
  });

  router.post(`${BASE}/:complaint_id/response`, (req, res) => {
    const c = complaintOf(req, res);
    c.calls.response += 1;
    const body = validate(responseBody, jsonBody(req));
    sameMerchant(c, body.complainted_mchid);
    const images = body.response_images ?? [];
    for (const id of images) {
      if (!desk.image(id)) throw paramError(`response_images: ${id} is not an uploaded image`);
    }
    desk.respond(c, body.response_content, images);
    answer(res, 204);
  });

  router.post(`${BASE}/:complaint_id/complete`, (req, res) => {
    const c = complaintOf(req, res);
    c.calls.complete += 1;
    const body = validate(completeBody, jsonBody(req));
    sameMerchant(c, body.complainted_mchid);
    desk.complete(c);
    answer(res, 204);
  });

  router.post(`${BASE}/:complaint_id/update-refund-progress`, (req, res) => {
    const c = complaintOf(req, res);
    c.calls.refundProgress += 1;
    const body = validate(refundProgressBody, jsonBody(req));
    if (body.action === 'REJECT' && body.reject_reason === undefined) {
      throw paramError('reject_reason is required to reject a refund');
    }
    if (body.action === 'REJECT' && body.launch_refund_day !== undefined) {
      throw paramError('launch_refund_day is only for APPROVE');
    }
    desk.refundProgress(c, body.action, body.reject_reason);
    answer(res, 204);
  });

  const NOTIFICATIONS = '/v3/merchant-service/complaint-notifications';
  const notifyView = (mchid: string) => ({ mchid, url: desk.notifyUrlOf(mchid) });

  router.post(NOTIFICATIONS, (req, res) => {
    const body = validate(notifyUrlBody, jsonBody(req));
    if (!isReachable(body.url)) throw paramError('url must be an https URL');
    const mchid = String(res.locals.mchid);
    if (desk.notifyUrlOf(mchid) !== undefined) {
      throw new WechatpayError(400, 'INVALID_REQUEST', '投诉通知回调地址已存在，请使用更新接口');
    }
    desk.setNotifyUrl(mchid, body.url);
    answer(res, 200, notifyView(mchid));
  });
  router.get(NOTIFICATIONS, (_req, res) => {
    const mchid = String(res.locals.mchid);
    if (desk.notifyUrlOf(mchid) === undefined) {
      throw new WechatpayError(400, 'RESOURCE_NOT_EXISTS', '投诉通知回调地址不存在');
    }
    answer(res, 200, notifyView(mchid));
  });
  router.put(NOTIFICATIONS, (req, res) => {
    const body = validate(notifyUrlBody, jsonBody(req));
    if (!isReachable(body.url)) throw paramError('url must be an https URL');
    const mchid = String(res.locals.mchid);
    if (desk.notifyUrlOf(mchid) === undefined) {
      throw new WechatpayError(400, 'RESOURCE_NOT_EXISTS', '投诉通知回调地址不存在');
    }
    desk.setNotifyUrl(mchid, body.url);
    answer(res, 200, notifyView(mchid));
  });
  router.delete(NOTIFICATIONS, (_req, res) => {
    desk.setNotifyUrl(String(res.locals.mchid), undefined);
    answer(res, 204);
  });

  // The images of replies (uploaded, signed over their meta part) and of the payer's complaint.
  router.post('/v3/merchant-service/images/upload', async (req, res) => {
    const form = (res.locals.mediaForm as MediaForm | undefined) ?? (await readMediaForm(req));
    let meta: { filename?: unknown; sha256?: unknown };
    try {
      meta = JSON.parse(form.meta) as typeof meta;
    } catch {
      throw paramError('meta is not JSON');
    }
    if (typeof meta.filename !== 'string' || !/\.(jpe?g|png|bmp)$/i.test(meta.filename)) {
      throw paramError('meta.filename must end .jpg, .png or .bmp');
    }
    const bytes = Buffer.from(await form.file.arrayBuffer());
    if (bytes.length === 0 || bytes.length > 2 * 1024 * 1024) throw paramError('图片大小须在 0 到 2M 之间');
    if (
      typeof meta.sha256 !== 'string' ||
      createHash('sha256').update(bytes).digest('hex') !== meta.sha256.toLowerCase()
    ) {
      throw paramError('meta.sha256 is not the SHA-256 of the file');
    }
    answer(res, 200, { media_id: desk.storeImage(bytes) });
  });
  router.get('/v3/merchant-service/images/:media_id', (req, res) => {
    const image = desk.image(String(req.params.media_id));
    if (!image) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '图片不存在');
    // Binary, and unsigned: WeChat Pay signs no image download.
    res.status(200).type(image.type).send(image.bytes);
  });
}
