/**
 * Alipay's trade complaints port (交易投诉, alipay.merchant.tradecomplain.*): the complaints about
 * the app (batchquery, 20 a page, each read whole by query for its negotiation), one complaint
 * with its `reply_detail_infos`, the merchant's reply (reply.submit) and its handling
 * (feedback.submit), images through alipay.merchant.image.upload, and the
 * `alipay.merchant.tradecomplain.changed` message, a signed form naming the complaint.
 *
 * Alipay has no API that registers where its messages go: they are posted to the app's gateway
 * URL (应用网关) set in the open platform's console, which an operator points at
 * `/api/v1/notify/complaint/alipay` once. The payer's phone, when Alipay gives it, is personal
 * data: sealed by whoever keeps it, never logged.
 */
import { AlipayFormData } from 'alipay-sdk';
import Joi from 'joi';
import { ChannelError } from '../errors';
import type { CallbackRequest, ChannelComplaint, ComplaintStep, ComplaintsPort } from '../ports';
import { verifyNotify } from './callbacks';
import type { AlipayClient } from './client';
import { beijingTime, fenOf, notifyParamsOf, parseBeijingTime, type Answer } from './transformers';

/** Alipay's page of complaints at most. */
const PAGE = 20;
/** The message Alipay posts when one of the app's complaints changes. */
export const COMPLAINT_MESSAGE = 'alipay.merchant.tradecomplain.changed';
/**
 * What `complete` tells Alipay (feedback.submit): 05 已完成售后服务, the merchant has dealt with
 * it. Alipay's other codes (00 保障金退款, 02 其他方式退款, 03 已发货, 04 其他, 06 非我方责任) say how;
 * durapay's refunds go through the order's own refund, which Alipay sees for itself.
 */
export const FEEDBACK_CODE = '05';
const FEEDBACK_CONTENT = '商家已处理完成';
/** Image types alipay.merchant.image.upload takes. */
const IMAGE_TYPES = new Set(['jpg', 'jpeg', 'png']);

export type AlipayComplaintStatus =
  | 'MERCHANT_PROCESSING'
  | 'MERCHANT_FEEDBACKED'
  | 'FINISHED'
  | 'CANCELLED'
  | 'PLATFORM_PROCESSING'
  | 'PLATFORM_FINISH'
  | 'CLOSED';

interface WireReply {
  content?: string;
  gmt_create: string;
  images?: string[];
  replier_name?: string;
  replier_role: string;
}

interface WireComplaint {
  complain_event_id: string;
  status: AlipayComplaintStatus;
  gmt_create: string;
  content?: string;
  complain_reason?: string;
  leaf_category_name?: string;
  merchant_order_no?: string;
  trade_no?: string;
  trade_amount?: string;
  complain_amount?: string;
  phone_no?: string;
  images?: string[];
  target_id?: string;
  reply_detail_infos?: WireReply[];
}

const complaintSchema = Joi.object<WireComplaint>({
  complain_event_id: Joi.string().required(),
  status: Joi.string()
    .valid(
      'MERCHANT_PROCESSING',
      'MERCHANT_FEEDBACKED',
      'FINISHED',
      'CANCELLED',
      'PLATFORM_PROCESSING',
      'PLATFORM_FINISH',
      'CLOSED',
    )
    .required(),
  gmt_create: Joi.string().required(),
  content: Joi.string().allow(''),
  complain_reason: Joi.string().allow(''),
  leaf_category_name: Joi.string().allow(''),
  merchant_order_no: Joi.string().allow(''),
  trade_no: Joi.string().allow(''),
  trade_amount: Joi.string().allow(''),
  complain_amount: Joi.string().allow(''),
  phone_no: Joi.string().allow(''),
  images: Joi.array().items(Joi.string()),
  target_id: Joi.string().allow(''),
  reply_detail_infos: Joi.array().items(
    Joi.object({
      content: Joi.string().allow(''),
      gmt_create: Joi.string().required(),
      images: Joi.array().items(Joi.string()),
      replier_name: Joi.string().allow(''),
      replier_role: Joi.string().required(),
    }).unknown(),
  ),
}).unknown();

/** A batchquery page: only the ids are read, each complaint whole by query. */
const pageSchema = Joi.object({
  trade_complain_infos: Joi.array().items(
    Joi.object({ complain_event_id: Joi.string().required() }).unknown(),
  ),
  total_page_num: Joi.number().integer().min(0),
}).unknown();

function parsed<T>(what: string, schema: Joi.Schema<T>, value: unknown): T {
  const { error, value: ok } = schema.validate(value);
  if (error) throw new ChannelError('invalid_response', `Alipay ${what}: ${error.message}`);
  return ok;
}

function timeOf(text: string, what: string): Date {
  const at = parseBeijingTime(text);
  if (!at) throw new ChannelError('invalid_response', `Alipay ${what}: ${text} is not a time`);
  return at;
}

/**
 * The negotiation as durapay's steps, in WeChat Pay's words where they mean the same (the rules
 * read them, rules.ts): the payer's complaint first, then each reply in turn.
 */
export function stepsOf(w: WireComplaint): ComplaintStep[] {
  const created: ComplaintStep = {
    id: `${w.complain_event_id}:0`,
    operator: '投诉人',
    at: timeOf(w.gmt_create, 'complaint'),
    type: 'USER_CREATE_COMPLAINT',
    details: w.content ?? '',
    imageUrls: w.images ?? [],
  };
  const replies = (w.reply_detail_infos ?? [])
    .map((r, i) => ({ r, i }))
    // Alipay lists them as they came; a tie keeps that order.
    .sort((a, b) => a.r.gmt_create.localeCompare(b.r.gmt_create) || a.i - b.i)
    .map(({ r }, i) => ({
      id: `${w.complain_event_id}:${i + 1}`,
      operator: r.replier_name ?? '',
      at: timeOf(r.gmt_create, 'complaint reply'),
      type:
        r.replier_role === 'MERCHANT'
          ? 'MERCHANT_RESPONSE'
          : r.replier_role === 'USER'
            ? 'USER_RESPONSE'
            : `${r.replier_role}_RESPONSE`,
      details: r.content ?? '',
      imageUrls: r.images ?? [],
    }));
  return [created, ...replies];
}

/**
 * Alipay's status as durapay's state: the merchant to act, not replied to yet (`pending`) or
 * replied to (`processing`); Alipay's customer service deciding (`processing`); the merchant's
 * handling fed back, or the complaint over (`processed`).
 */
export function stateOf(status: AlipayComplaintStatus, steps: ComplaintStep[]): ChannelComplaint['state'] {
  if (status === 'MERCHANT_PROCESSING')
    return steps.some((s) => s.type === 'MERCHANT_RESPONSE') ? 'processing' : 'pending';
  if (status === 'PLATFORM_PROCESSING') return 'processing';
  return 'processed';
}

export function complaintOf(w: WireComplaint, appId: string): ChannelComplaint {
  const steps = stepsOf(w);
  const last = steps[steps.length - 1]!;
  const refund = /退款/.test(`${w.leaf_category_name ?? ''}${w.complain_reason ?? ''}`);
  const asked = fenOf(w.complain_amount);
  return {
    complaintId: w.complain_event_id,
    state: stateOf(w.status, steps),
    complainedAt: steps[0]!.at,
    detail: [w.complain_reason, w.content].filter((t) => t !== undefined && t !== '').join(': '),
    // The complaint is about the app (小程序, 生活号 or the app durapay calls as): its id.
    subMerchantNo: w.target_id || appId,
    orders: w.merchant_order_no
      ? [
          {
            tradeNo: w.merchant_order_no,
            channelTradeNo: w.trade_no ?? '',
            amount: fenOf(w.trade_amount) ?? 0,
          },
        ]
      : [],
    problemType: refund ? 'refund' : 'other',
    ...(refund && asked !== undefined ? { applyRefundAmount: asked } : {}),
    ...(w.phone_no ? { payerPhone: w.phone_no } : {}),
    // Alipay says nothing of refunds on a complaint: the order's own refunds say it.
    fullRefunded: false,
    // Alipay has no continued complaint: a payer who is not satisfied complains anew.
    complaintTimes: 1,
    awaitsReply: last.type === 'USER_RESPONSE',
    imageUrls: w.images ?? [],
  };
}

/** Whether an image URL is one Alipay serves (its own hosts over https, or its gateway's host). */
function isAlipayImage(url: URL, gatewayUrl: string): boolean {
  if (url.origin === new URL(gatewayUrl).origin) return true;
  return url.protocol === 'https:' && /(^|\.)(alipay\.com|alipayobjects\.com)$/.test(url.hostname);
}

export function alipayComplaints(client: AlipayClient): ComplaintsPort {
  const { appId } = client.options;

  const query = async (complaintId: string): Promise<WireComplaint | undefined> => {
    let answer: Answer | undefined;
    try {
      answer = await client.call('query complaint', 'alipay.merchant.tradecomplain.query', {
        bizContent: { complain_event_id: complaintId },
      });
    } catch (err) {
      // The complaint is not this app's, or there is none of that id.
      if (err instanceof ChannelError && err.kind === 'refused' && /NOT_EXIST/.test(err.message))
        return undefined;
      throw err;
    }
    return answer === undefined ? undefined : parsed('complaint', complaintSchema, answer);
  };

  const port: ComplaintsPort = {
    async list(fromDay, toDay) {
      const begin = Date.parse(`${fromDay}T00:00:00+08:00`);
      const end = Date.parse(`${toDay}T00:00:00+08:00`) + 86_400_000 - 1_000;
      if (Number.isNaN(begin) || Number.isNaN(end) || end < begin) {
        throw new ChannelError('refused', `no days from ${fromDay} to ${toDay}`);
      }
      const ids: string[] = [];
      for (let page = 1; ; page++) {
        const answer = parsed(
          'complaint list',
          pageSchema,
          await client.call('list complaints', 'alipay.merchant.tradecomplain.batchquery', {
            bizContent: {
              begin_time: beijingTime(new Date(begin)),
              end_time: beijingTime(new Date(end)),
              page_num: page,
              page_size: PAGE,
            },
          }),
        ) as { trade_complain_infos?: { complain_event_id: string }[]; total_page_num?: number };
        const rows = answer.trade_complain_infos ?? [];
        ids.push(...rows.map((r) => r.complain_event_id));
        if (rows.length < PAGE || (answer.total_page_num !== undefined && page >= answer.total_page_num))
          break;
      }
      // The list's items carry no negotiation: each is read whole, as the sweep compares it.
      const found: ChannelComplaint[] = [];
      for (const id of new Set(ids)) {
        const w = await query(id);
        if (w) found.push(complaintOf(w, appId));
      }
      return found;
    },

    async get(complaintId) {
      const w = await query(complaintId);
      return w && complaintOf(w, appId);
    },

    async history(complaintId) {
      const w = await query(complaintId);
      return w ? stepsOf(w) : [];
    },

    async uploadImage(content, filename) {
      const type = (/\.([a-z]+)$/i.exec(filename)?.[1] ?? '').toLowerCase();
      if (!IMAGE_TYPES.has(type))
        throw new ChannelError('refused', 'an Alipay complaint reply image must be a .jpg or .png file');
      const form = new AlipayFormData();
      form.addField('image_type', type);
      form.addField('timestamp', beijingTime(new Date()));
      form.addFile('image_content', filename, content);
      const answer = await client.call('upload complaint image', 'alipay.merchant.image.upload', {}, form);
      return client.field(answer, 'image_id', 'complaint image upload');
    },

    async reply(c, content, imageIds) {
      await client.call('reply to complaint', 'alipay.merchant.tradecomplain.reply.submit', {
        bizContent: {
          complain_event_id: c.complaintId,
          reply_content: content,
          ...(imageIds.length ? { reply_images: imageIds.join(',') } : {}),
        },
      });
    },

    async complete(c) {
      await client.call('complete complaint', 'alipay.merchant.tradecomplain.feedback.submit', {
        bizContent: {
          complain_event_id: c.complaintId,
          feedback_code: FEEDBACK_CODE,
          feedback_content: FEEDBACK_CONTENT,
        },
      });
    },

    async image(url) {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        throw new ChannelError('invalid_response', 'Alipay complaint image is not a URL');
      }
      if (!isAlipayImage(target, client.options.gatewayUrl)) {
        throw new ChannelError(
          'invalid_response',
          `Alipay complaint image on ${target.host} is not Alipay's`,
        );
      }
      let res: Response;
      try {
        res = await fetch(target, {
          redirect: 'error',
          signal: AbortSignal.timeout(client.options.timeoutMs),
        });
      } catch (err) {
        throw new ChannelError(
          'unreachable',
          `Alipay complaint image not fetched: ${err instanceof Error ? err.name : 'error'}`,
        );
      }
      if (res.status !== 200) {
        throw new ChannelError(
          res.status === 404 ? 'refused' : 'unreachable',
          `Alipay complaint image answered HTTP ${res.status}`,
        );
      }
      return {
        content: Buffer.from(await res.arrayBuffer()),
        contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      };
    },

    async decodeNotification(req: CallbackRequest) {
      const check = verifyNotify(client, req);
      if (!check.ok) throw new ChannelError('invalid_response', `Alipay complaint message: ${check.reason}`);
      const params = notifyParamsOf(req.rawBody);
      if (params.app_id !== appId) {
        throw new ChannelError(
          'invalid_response',
          `Alipay message for app_id ${params.app_id ?? ''}, not this app`,
        );
      }
      if (params.msg_method !== COMPLAINT_MESSAGE) {
        throw new ChannelError(
          'invalid_response',
          `Alipay message ${params.msg_method ?? '(none)'} is not a complaint's`,
        );
      }
      let biz: { complain_event_id?: unknown };
      try {
        biz = JSON.parse(params.biz_content ?? '') as typeof biz;
      } catch {
        throw new ChannelError('invalid_response', 'Alipay complaint message biz_content is not JSON');
      }
      if (typeof biz.complain_event_id !== 'string' || biz.complain_event_id === '') {
        throw new ChannelError('invalid_response', 'Alipay complaint message without complain_event_id');
      }
      return {
        eventId: params.notify_id ?? `${biz.complain_event_id}:${params.utc_timestamp ?? ''}`,
        complaintId: biz.complain_event_id,
        action: 'changed',
      };
    },
  };
  return port;
}
