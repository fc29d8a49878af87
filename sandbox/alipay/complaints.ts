/**
 * The sandbox's trade complaints (交易投诉, alipay.merchant.tradecomplain.*): a payer's complaint
 * about a paid trade of the app, its negotiation (reply_detail_infos), and the moves Alipay
 * publishes — the merchant's replies keep it MERCHANT_PROCESSING, its handling
 * (feedback.submit) makes it MERCHANT_FEEDBACKED, the payer's confirmation FINISHED or their
 * withdrawal CANCELLED. Each change is posted as the signed `alipay.merchant.tradecomplain.changed`
 * message to the app's gateway URL (应用网关), which an operator sets in Alipay's console (here,
 * `setGatewayUrl`), and sent again on Alipay's rhythm until answered `success`. Kept in memory,
 * like the trades.
 */
import { randomUUID } from 'node:crypto';
import Joi from 'joi';
import type { AlipayGateway, Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import type { TradeRecord } from './store';
import { yuan } from './views';
import { beijingTime, businessFailed, invalidArgument, parseBeijingTime, randomDigits } from './wire';

export type ComplaintStatus =
  | 'MERCHANT_PROCESSING'
  | 'MERCHANT_FEEDBACKED'
  | 'FINISHED'
  | 'CANCELLED'
  | 'PLATFORM_PROCESSING'
  | 'PLATFORM_FINISH'
  | 'CLOSED';

const OVER: readonly ComplaintStatus[] = ['FINISHED', 'CANCELLED', 'PLATFORM_FINISH', 'CLOSED'];
export const COMPLAINT_MESSAGE = 'alipay.merchant.tradecomplain.changed';
export const COMPLAINT_IMAGE_PATH = '/complain-images';
/** Alipay's page of complaints at most. */
const MAX_PAGE_SIZE = 20;
/** alipay.merchant.image.upload: jpg, jpeg or png, up to 5 MB. */
const IMAGE_MAGIC: Record<string, { magic: Buffer; type: string }> = {
  jpg: { magic: Buffer.from([0xff, 0xd8, 0xff]), type: 'image/jpeg' },
  jpeg: { magic: Buffer.from([0xff, 0xd8, 0xff]), type: 'image/jpeg' },
  png: { magic: Buffer.from([0x89, 0x50, 0x4e, 0x47]), type: 'image/png' },
};
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const FEEDBACK_CODES = ['00', '02', '03', '04', '05', '06'] as const;

export interface ReplyRecord {
  content: string;
  gmt_create: string;
  images: string[];
  replier_name: string;
  replier_role: 'USER' | 'MERCHANT' | 'SYSTEM';
}

export interface AlipayComplaintRecord {
  complainEventId: string;
  trade: TradeRecord;
  status: ComplaintStatus;
  createdAt: number;
  modifiedAt: number;
  finishedAt?: number;
  reason: string;
  content: string;
  leafCategoryName: string;
  complainAmountFen?: number;
  phoneNo: string;
  imageIds: string[];
  replies: ReplyRecord[];
  feedback?: { code: string; content: string };
  /** Calls that reached Alipay for this complaint, refused ones included: a test counts them. */
  calls: { reply: number; supplement: number; feedback: number };
}

/** What opening a complaint may say; the rest is made up as a payer would. */
export interface OpenAlipayComplaint {
  content?: string;
  reason?: string;
  /** 诉求: `退款` (a refund asked, of `amountFen`) by default. */
  leafCategoryName?: string;
  amountFen?: number;
  phoneNo?: string;
  /** Images the payer attached (PNG or JPEG bytes). */
  images?: Buffer[];
  /** The message is lost: only the list finds the complaint. */
  lostMessage?: boolean;
}

export class AlipayComplaintDesk {
  private readonly complaints = new Map<string, AlipayComplaintRecord>();
  private readonly images = new Map<string, { bytes: Buffer; type: string }>();
  /** The app's gateway URL, where its messages go, as set in Alipay's console. */
  private gatewayUrl: string | undefined;

  constructor(private readonly gateway: AlipayGateway) {}

  setGatewayUrl(url: string | undefined): void {
    this.gatewayUrl = url;
  }

  find(complainEventId: string): AlipayComplaintRecord | undefined {
    return this.complaints.get(complainEventId);
  }

  all(): AlipayComplaintRecord[] {
    return [...this.complaints.values()];
  }

  image(imageId: string): { bytes: Buffer; type: string } | undefined {
    return this.images.get(imageId);
  }

  storeImage(imageType: string, bytes: Buffer): string {
    const kind = IMAGE_MAGIC[imageType.toLowerCase()];
    if (!kind)
      throw invalidArgument(
        'isv.invalid-file-extension',
        `文件扩展名无效: image_type ${imageType}; jpg, jpeg or png`,
      );
    if (bytes.length === 0 || bytes.length > MAX_IMAGE_BYTES) {
      throw invalidArgument('isv.invalid-file-size', '文件大小无效: an image is at most 5 MB');
    }
    if (!bytes.subarray(0, kind.magic.length).equals(kind.magic)) {
      throw invalidArgument(
        'isv.invalid-file-extension',
        `文件扩展名无效: the file is not a ${imageType} image`,
      );
    }
    const id = `A*${randomUUID().replace(/-/g, '')}`;
    this.images.set(id, { bytes, type: kind.type });
    return id;
  }

  private imageUrl(id: string): string {
    return `${this.gateway.options.base}${COMPLAINT_IMAGE_PATH}/${encodeURIComponent(id)}`;
  }

  private changed(c: AlipayComplaintRecord, now: number): void {
    c.modifiedAt = now;
    if (this.gatewayUrl === undefined) {
      this.gateway.options.logger.info('alipay sandbox complaint has no gateway URL: no message', {
        complain_event_id: c.complainEventId,
      });
      return;
    }
    this.gateway.notifier.notify(`complaint:${c.complainEventId}`, this.gatewayUrl, '', {
      notify_id: randomUUID().replace(/-/g, ''),
      utc_timestamp: String(now),
      msg_method: COMPLAINT_MESSAGE,
      app_id: this.gateway.app.appId,
      version: '1.1',
      charset: 'utf-8',
      sign_type: 'RSA2',
      biz_content: JSON.stringify({ complain_event_id: c.complainEventId }),
    });
  }

  /** A payer complains about a paid trade of the app. */
  open(trade: TradeRecord, o: OpenAlipayComplaint = {}): AlipayComplaintRecord {
    if (trade.status !== 'TRADE_SUCCESS' && trade.status !== 'TRADE_FINISHED' && trade.refunds.length === 0) {
      throw new Error(
        `trade ${trade.order.out_trade_no} is ${trade.status}: only a paid trade is complained about`,
      );
    }
    const now = Date.now();
    const leaf = o.leafCategoryName ?? '退款';
    const c: AlipayComplaintRecord = {
      complainEventId: `${beijingTime(now).slice(0, 10).replace(/-/g, '')}0010200${randomDigits(13)}`,
      trade,
      status: 'MERCHANT_PROCESSING',
      createdAt: now,
      modifiedAt: now,
      reason: o.reason ?? '商品与描述不符',
      content: o.content ?? '收到的商品与描述不符，要求退款',
      leafCategoryName: leaf,
      ...(leaf.includes('退款') ? { complainAmountFen: o.amountFen ?? trade.totalFen } : {}),
      phoneNo: o.phoneNo ?? `1${randomDigits(10)}`,
      imageIds: (o.images ?? []).map((b) => this.storeImage(b[0] === 0x89 ? 'png' : 'jpg', b)),
      replies: [],
      calls: { reply: 0, supplement: 0, feedback: 0 },
    };
    this.complaints.set(c.complainEventId, c);
    if (o.lostMessage) {
      this.gateway.options.logger.info('alipay sandbox complaint message dropped (fault injection)', {
        complain_event_id: c.complainEventId,
      });
      return c;
    }
    this.changed(c, now);
    return c;
  }

  private reply(
    c: AlipayComplaintRecord,
    role: ReplyRecord['replier_role'],
    content: string,
    images: string[],
  ) {
    c.replies.push({
      content,
      gmt_create: beijingTime(Date.now()),
      images: images.map((id) => this.imageUrl(id)),
      replier_name: role === 'USER' ? '投诉人' : role === 'MERCHANT' ? '商家' : '支付宝',
      replier_role: role,
    });
  }

  /** The payer writes again. */
  payerReplies(c: AlipayComplaintRecord, text: string): void {
    this.reply(c, 'USER', text, []);
    this.changed(c, Date.now());
  }

  /** The payer accepts the merchant's handling (FINISHED) or withdraws the complaint (CANCELLED). */
  payerEnds(c: AlipayComplaintRecord, how: 'FINISHED' | 'CANCELLED'): void {
    if (OVER.includes(c.status)) throw new Error(`complaint ${c.complainEventId} is ${c.status} already`);
    c.status = how;
    c.finishedAt = Date.now();
    this.changed(c, c.finishedAt);
  }

  /** The complaint as batchquery lists it and query shows it (query adds trade_amount and the replies). */
  view(c: AlipayComplaintRecord, detail: boolean): Record<string, unknown> {
    return {
      complain_event_id: c.complainEventId,
      status: c.status,
      trade_no: c.trade.tradeNo,
      merchant_order_no: c.trade.order.out_trade_no,
      gmt_create: beijingTime(c.createdAt),
      gmt_modified: beijingTime(c.modifiedAt),
      ...(c.finishedAt === undefined ? {} : { gmt_finished: beijingTime(c.finishedAt) }),
      leaf_category_name: c.leafCategoryName,
      complain_reason: c.reason,
      content: c.content,
      images: c.imageIds.map((id) => this.imageUrl(id)),
      phone_no: c.phoneNo,
      target_id: this.gateway.app.appId,
      target_type: 'APPID',
      ...(c.complainAmountFen === undefined ? {} : { complain_amount: yuan(c.complainAmountFen) }),
      ...(detail ? { trade_amount: yuan(c.trade.totalFen), reply_detail_infos: c.replies } : {}),
    };
  }

  private known(id: unknown): AlipayComplaintRecord {
    const c = typeof id === 'string' ? this.complaints.get(id) : undefined;
    if (!c) throw businessFailed('COMPLAIN_EVENT_NOT_EXIST', '投诉单不存在');
    return c;
  }

  private imageIdsOf(text: string | undefined): string[] {
    if (text === undefined || text === '') return [];
    const ids = text.split(',');
    if (ids.length > 4) throw invalidArgument('isv.invalid-parameter', '参数无效 images: at most 4');
    for (const id of ids) {
      if (!this.images.has(id)) throw businessFailed('IMAGE_NOT_EXIST', `图片不存在: ${id}`);
    }
    return ids;
  }

  handlers(): Record<string, Handler> {
    const byId = Joi.object({ complain_event_id: Joi.string().max(64).required() });
    const batch = Joi.object({
      begin_time: Joi.string().pattern(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      end_time: Joi.string().pattern(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      page_num: Joi.number().integer().min(1),
      page_size: Joi.number().integer().min(1).max(MAX_PAGE_SIZE),
      status: Joi.string(),
    });
    const reply = Joi.object({
      complain_event_id: Joi.string().max(64).required(),
      reply_content: Joi.string().min(1).max(200).required(),
      reply_images: Joi.string(),
    });
    const supplement = Joi.object({
      complain_event_id: Joi.string().max(64).required(),
      supplement_content: Joi.string().min(1).max(200).required(),
      supplement_images: Joi.string(),
    });
    const feedback = Joi.object({
      complain_event_id: Joi.string().max(64).required(),
      feedback_code: Joi.string()
        .valid(...FEEDBACK_CODES)
        .required(),
      feedback_content: Joi.string().min(1).max(200).required(),
      feedback_images: Joi.string(),
      operator: Joi.string().max(6),
    });

    return {
      'alipay.merchant.tradecomplain.batchquery': (call) => {
        const q = validateBiz(batch, parseBizContent(call.params)) as {
          begin_time?: string;
          end_time?: string;
          page_num?: number;
          page_size?: number;
          status?: string;
        };
        const end = q.end_time === undefined ? call.now : parseBeijingTime(q.end_time);
        const begin =
          q.begin_time === undefined ? call.now - 30 * 86_400_000 : parseBeijingTime(q.begin_time);
        if (begin === undefined || end === undefined || end < begin || end - begin > 366 * 86_400_000) {
          throw invalidArgument(
            'isv.invalid-parameter',
            '参数无效 begin_time, end_time: a span of at most a year',
          );
        }
        const pageSize = q.page_size ?? 10;
        const pageNum = q.page_num ?? 1;
        const all = this.all()
          .filter((c) => c.createdAt >= begin && c.createdAt <= end + 999)
          .filter((c) => q.status === undefined || c.status === q.status)
          .sort((a, b) => b.createdAt - a.createdAt || a.complainEventId.localeCompare(b.complainEventId));
        return {
          page_num: pageNum,
          page_size: pageSize,
          total_num: all.length,
          total_page_num: Math.ceil(all.length / pageSize),
          trade_complain_infos: all
            .slice((pageNum - 1) * pageSize, pageNum * pageSize)
            .map((c) => this.view(c, false)),
        };
      },

      'alipay.merchant.tradecomplain.query': (call) => {
        const q = validateBiz(byId, parseBizContent(call.params)) as { complain_event_id: string };
        return this.view(this.known(q.complain_event_id), true);
      },

      'alipay.merchant.tradecomplain.reply.submit': (call) => {
        const q = validateBiz(reply, parseBizContent(call.params)) as {
          complain_event_id: string;
          reply_content: string;
          reply_images?: string;
        };
        const c = this.known(q.complain_event_id);
        c.calls.reply += 1;
        if (c.status !== 'MERCHANT_PROCESSING' && c.status !== 'PLATFORM_PROCESSING') {
          throw businessFailed('COMPLAIN_STATUS_NOT_SUPPORT', `投诉单状态${c.status}不支持留言回复`);
        }
        this.reply(c, 'MERCHANT', q.reply_content, this.imageIdsOf(q.reply_images));
        this.changed(c, call.now);
        return {};
      },

      'alipay.merchant.tradecomplain.supplement.submit': (call) => {
        const q = validateBiz(supplement, parseBizContent(call.params)) as {
          complain_event_id: string;
          supplement_content: string;
          supplement_images?: string;
        };
        const c = this.known(q.complain_event_id);
        c.calls.supplement += 1;
        if (OVER.includes(c.status)) {
          throw businessFailed('COMPLAIN_STATUS_NOT_SUPPORT', `投诉单状态${c.status}不支持补充凭证`);
        }
        this.reply(c, 'MERCHANT', q.supplement_content, this.imageIdsOf(q.supplement_images));
        this.changed(c, call.now);
        return {};
      },

      'alipay.merchant.tradecomplain.feedback.submit': (call) => {
        const q = validateBiz(feedback, parseBizContent(call.params)) as {
          complain_event_id: string;
          feedback_code: string;
          feedback_content: string;
          feedback_images?: string;
        };
        const c = this.known(q.complain_event_id);
        c.calls.feedback += 1;
        if (c.status !== 'MERCHANT_PROCESSING') {
          throw businessFailed('COMPLAIN_STATUS_NOT_SUPPORT', `投诉单状态${c.status}不支持处理反馈`);
        }
        this.imageIdsOf(q.feedback_images);
        c.feedback = { code: q.feedback_code, content: q.feedback_content };
        c.status = 'MERCHANT_FEEDBACKED';
        this.changed(c, call.now);
        return {};
      },

      'alipay.merchant.image.upload': async (call) => {
        const imageType = call.params.image_type;
        if (!imageType) throw invalidArgument('isv.missing-parameter', '缺少必选参数 image_type');
        const file = call.files.get('image_content');
        if (!file) throw invalidArgument('isv.missing-parameter', '缺少必选参数 image_content (a file part)');
        return { image_id: this.storeImage(imageType, Buffer.from(await file.arrayBuffer())) };
      },
    };
  }
}
