/**
 * WeChat Pay's consumer complaints port (消费者投诉2.0, service provider): the complaint
 * notification URL, the list (30-day spans, 50 a page) and the detail, the negotiation history,
 * the reply with its images and the completion, and the complaint notifications themselves
 * (signed and sealed like payment callbacks, their resource a complaint_id and an action_type).
 * The payer's phone comes sealed to the merchant's key and is opened here; it is personal data
 * and never logged.
 */
import { constants, createHash, privateDecrypt } from 'node:crypto';
import Joi from 'joi';
import { Multipart } from 'wechatpay-axios-plugin';
import { ChannelError } from '../errors';
import type { CallbackRequest, ChannelComplaint, ComplaintStep, ComplaintsPort } from '../ports';
import { verifyCallback } from './callbacks';
import type { WechatpayClient } from './client';
import { decryptResource } from './signature';
import { parseNotification } from './transformers';

const BASE = 'v3/merchant-service/complaints-v2';
const NOTIFY = 'v3/merchant-service/complaint-notifications';
/** WeChat Pay's page of complaints at most. */
const PAGE = 50;
/** WeChat Pay's widest span of a list, in days. */
const MAX_SPAN_DAYS = 30;

interface WireComplaint {
  complaint_id: string;
  complaint_time: string;
  complaint_detail: string;
  complainted_mchid: string;
  complaint_state: 'PENDING' | 'PROCESSING' | 'PROCESSED';
  payer_phone?: string;
  complaint_order_info?: { transaction_id: string; out_trade_no: string; amount: number }[];
  complaint_full_refunded: boolean;
  incoming_user_response: boolean;
  user_complaint_times: number;
  complaint_media_list?: { media_type: string; media_url: string[] }[];
  problem_type?: 'REFUND' | 'SERVICE_NOT_WORK' | 'OTHERS';
  apply_refund_amount?: number;
}

const complaintSchema = Joi.object<WireComplaint>({
  complaint_id: Joi.string().required(),
  complaint_time: Joi.string().isoDate().required(),
  complaint_detail: Joi.string().allow('').required(),
  complainted_mchid: Joi.string().required(),
  complaint_state: Joi.string().valid('PENDING', 'PROCESSING', 'PROCESSED').required(),
  payer_phone: Joi.string(),
  complaint_order_info: Joi.array().items(
    Joi.object({
      transaction_id: Joi.string().allow('').required(),
      out_trade_no: Joi.string().required(),
      amount: Joi.number().integer().min(0).required(),
    }).unknown(),
  ),
  complaint_full_refunded: Joi.boolean().required(),
  incoming_user_response: Joi.boolean().required(),
  user_complaint_times: Joi.number().integer().min(0).required(),
  complaint_media_list: Joi.array().items(
    Joi.object({
      media_type: Joi.string().required(),
      media_url: Joi.array().items(Joi.string()).required(),
    }).unknown(),
  ),
  problem_type: Joi.string(),
  apply_refund_amount: Joi.number().integer().min(0),
}).unknown();

const stepSchema = Joi.object({
  log_id: Joi.string().required(),
  operator: Joi.string().allow('').required(),
  operate_time: Joi.string().isoDate().required(),
  operate_type: Joi.string().required(),
  operate_details: Joi.string().allow(''),
  image_list: Joi.array().items(Joi.string()),
}).unknown();

const pageSchema = (item: Joi.Schema) =>
  Joi.object({
    data: Joi.array().items(item),
    limit: Joi.number().integer(),
    offset: Joi.number().integer(),
    total_count: Joi.number().integer(),
  }).unknown();

function parsed<T>(what: string, schema: Joi.Schema<T>, value: unknown): T {
  const { error, value: ok } = schema.validate(value);
  if (error) throw new ChannelError('invalid_response', `WeChat Pay ${what}: ${error.message}`);
  return ok;
}

const PROBLEMS = { REFUND: 'refund', SERVICE_NOT_WORK: 'service_not_work', OTHERS: 'other' } as const;

/** The days from `fromDay` to `toDay` in spans WeChat Pay takes (at most 30 days each). */
export function spansOf(fromDay: string, toDay: string): [string, string][] {
  const day = 86_400_000;
  const start = Date.parse(`${fromDay}T00:00:00Z`);
  const end = Date.parse(`${toDay}T00:00:00Z`);
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) {
    throw new ChannelError('refused', `no days from ${fromDay} to ${toDay}`);
  }
  const spans: [string, string][] = [];
  for (let at = start; at <= end; at += MAX_SPAN_DAYS * day) {
    const last = Math.min(end, at + (MAX_SPAN_DAYS - 1) * day);
    spans.push([new Date(at).toISOString().slice(0, 10), new Date(last).toISOString().slice(0, 10)]);
  }
  return spans;
}

/** WeChat Pay's complaints, whose notification URL is registered through its API. */
export type WechatpayComplaintsPort = ComplaintsPort & Required<Pick<ComplaintsPort, 'registerNotifyUrl'>>;

export function wechatpayComplaints(client: WechatpayClient): WechatpayComplaintsPort {
  const openPhone = (sealed: string | undefined): string | undefined => {
    if (sealed === undefined) return undefined;
    try {
      return privateDecrypt(
        { key: client.merchantKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
        Buffer.from(sealed, 'base64'),
      ).toString('utf8');
    } catch {
      throw new ChannelError(
        'invalid_response',
        "WeChat Pay complaint's payer_phone does not open with the merchant key",
      );
    }
  };

  const complaintOf = (w: WireComplaint): ChannelComplaint => {
    const phone = openPhone(w.payer_phone);
    return {
      complaintId: w.complaint_id,
      state:
        w.complaint_state === 'PENDING'
          ? 'pending'
          : w.complaint_state === 'PROCESSING'
            ? 'processing'
            : 'processed',
      complainedAt: new Date(w.complaint_time),
      detail: w.complaint_detail,
      subMerchantNo: w.complainted_mchid,
      orders: (w.complaint_order_info ?? []).map((o) => ({
        tradeNo: o.out_trade_no,
        channelTradeNo: o.transaction_id,
        amount: o.amount,
      })),
      problemType: PROBLEMS[w.problem_type as keyof typeof PROBLEMS] ?? 'other',
      ...(w.apply_refund_amount === undefined ? {} : { applyRefundAmount: w.apply_refund_amount }),
      ...(phone === undefined ? {} : { payerPhone: phone }),
      fullRefunded: w.complaint_full_refunded,
      complaintTimes: w.user_complaint_times,
      awaitsReply: w.incoming_user_response,
      imageUrls: (w.complaint_media_list ?? []).flatMap((m) => m.media_url),
    };
  };

  /** A URL WeChat Pay handed out, as the path the client signs (it must be on the API's host). */
  const pathOf = (url: string): string => {
    const base = new URL(`${client.options.baseUrl}/`);
    const target = new URL(url);
    if (target.origin !== base.origin || !target.pathname.startsWith(base.pathname)) {
      throw new ChannelError(
        'invalid_response',
        `WeChat Pay image ${target.pathname} is not on ${client.options.baseUrl}`,
      );
    }
    return target.pathname.slice(base.pathname.length);
  };

  const port: WechatpayComplaintsPort = {
    async registerNotifyUrl(url) {
      const current = (await client
        .call('read complaint notification URL', 'GET', NOTIFY)
        .catch((err: unknown) => {
          // 400 RESOURCE_NOT_EXISTS: none registered yet.
          if (err instanceof ChannelError && err.message.includes('RESOURCE_NOT_EXISTS')) return undefined;
          throw err;
        })) as { url?: string } | undefined;
      if (current?.url === url) return;
      await client.call('register complaint notification URL', current ? 'PUT' : 'POST', NOTIFY, { url });
    },

    async list(fromDay, toDay) {
      const found: ChannelComplaint[] = [];
      for (const [begin, end] of spansOf(fromDay, toDay)) {
        for (let offset = 0; ; offset += PAGE) {
          const page = parsed(
            'complaint list',
            pageSchema(complaintSchema),
            await client.call('list complaints', 'GET', BASE, undefined, {
              params: { begin_date: begin, end_date: end, limit: String(PAGE), offset: String(offset) },
            }),
          ) as { data?: WireComplaint[] };
          const rows = page.data ?? [];
          found.push(...rows.map(complaintOf));
          if (rows.length < PAGE) break;
        }
      }
      return found;
    },

    async get(complaintId) {
      const answer = await client.call(
        'query complaint',
        'GET',
        `${BASE}/${encodeURIComponent(complaintId)}`,
        undefined,
        { notFoundCode: 'RESOURCE_NOT_EXISTS' },
      );
      return answer === undefined ? undefined : complaintOf(parsed('complaint', complaintSchema, answer));
    },

    async history(complaintId) {
      const steps: ComplaintStep[] = [];
      for (let offset = 0; ; offset += 300) {
        const page = parsed(
          'complaint history',
          pageSchema(stepSchema),
          await client.call(
            'query complaint history',
            'GET',
            `${BASE}/${encodeURIComponent(complaintId)}/negotiation-historys`,
            undefined,
            {
              params: { limit: '300', offset: String(offset) },
            },
          ),
        ) as {
          data?: {
            log_id: string;
            operator: string;
            operate_time: string;
            operate_type: string;
            operate_details?: string;
            image_list?: string[];
          }[];
        };
        const rows = page.data ?? [];
        steps.push(
          ...rows.map((r) => ({
            id: r.log_id,
            operator: r.operator,
            at: new Date(r.operate_time),
            type: r.operate_type,
            details: r.operate_details ?? '',
            imageUrls: r.image_list ?? [],
          })),
        );
        if (rows.length < 300) break;
      }
      return steps;
    },

    async uploadImage(content, filename) {
      if (!/\.(jpe?g|png|bmp)$/i.test(filename)) {
        throw new ChannelError('refused', 'a complaint reply image must be a .jpg, .png or .bmp file');
      }
      const meta = { filename, sha256: createHash('sha256').update(content).digest('hex') };
      const form = new Multipart().append('meta', JSON.stringify(meta)).append('file', content, filename);
      const answer = await client.call(
        'upload complaint image',
        'POST',
        'v3/merchant-service/images/upload',
        form.getBuffer(),
        {
          headers: form.getHeaders() as Record<string, string>,
          meta,
        },
      );
      const mediaId = (answer as { media_id?: unknown } | undefined)?.media_id;
      if (typeof mediaId !== 'string' || mediaId === '') {
        throw new ChannelError('invalid_response', 'WeChat Pay image upload answered without media_id');
      }
      return mediaId;
    },

    async reply(c, content, imageIds) {
      await client.call(
        'reply to complaint',
        'POST',
        `${BASE}/${encodeURIComponent(c.complaintId)}/response`,
        {
          complainted_mchid: c.subMerchantNo,
          response_content: content,
          ...(imageIds.length ? { response_images: imageIds } : {}),
        },
      );
    },

    async complete(c) {
      await client.call(
        'complete complaint',
        'POST',
        `${BASE}/${encodeURIComponent(c.complaintId)}/complete`,
        {
          complainted_mchid: c.subMerchantNo,
        },
      );
    },

    async approveRefund(c) {
      // The refund is launched today (launch_refund_day 0): durapay approves only what its book made.
      await client.call(
        'approve complaint refund',
        'POST',
        `${BASE}/${encodeURIComponent(c.complaintId)}/update-refund-progress`,
        { action: 'APPROVE', launch_refund_day: 0 },
      );
    },

    async image(url) {
      return (await client.call('download complaint image', 'GET', pathOf(url), undefined, {
        binary: true,
      })) as {
        content: Buffer;
        contentType: string;
      };
    },

    async decodeNotification(req: CallbackRequest) {
      const check = await verifyCallback(client, req);
      if (!check.ok)
        throw new ChannelError('invalid_response', `WeChat Pay complaint notification: ${check.reason}`);
      let notification;
      try {
        notification = parseNotification(JSON.parse(req.rawBody.toString('utf8')));
      } catch {
        throw new ChannelError(
          'invalid_response',
          'WeChat Pay complaint notification is not a v3 notification',
        );
      }
      if (!notification.event_type.startsWith('COMPLAINT.')) {
        throw new ChannelError(
          'invalid_response',
          `WeChat Pay notification ${notification.event_type} is not a complaint's`,
        );
      }
      let plain: { complaint_id?: unknown; action_type?: unknown };
      try {
        plain = JSON.parse(decryptResource(notification.resource, client.options.apiV3Key)) as typeof plain;
      } catch {
        throw new ChannelError(
          'invalid_response',
          'WeChat Pay complaint notification does not decrypt with the APIv3 key',
        );
      }
      if (typeof plain.complaint_id !== 'string' || typeof plain.action_type !== 'string') {
        throw new ChannelError(
          'invalid_response',
          'WeChat Pay complaint notification without complaint_id or action_type',
        );
      }
      return { eventId: notification.id, complaintId: plain.complaint_id, action: plain.action_type };
    },
  };
  return port;
}
