/**
 * The sandbox's complaint routes (消费者投诉2.0, as the service provider's API publishes them):
 * the list (a span of at most 30 days, at most 50 a page), the detail, the negotiation history,
 * the reply, the completion, the refund approval, the notification URL's create, read, update
 * and delete, and the image upload and download the replies use. The complaints themselves and
 * their moves are complaints.ts's.
 */
import { createHash } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { readMediaForm, type MediaForm } from './applyment';
import type { ComplaintDesk, ComplaintRecord } from './complaints';
import type { SandboxContext } from './context';
import { jsonBody, paramError, validate } from './http';
import { WechatpayError, rfc3339Cst } from './wire';

/** A reply containing it is recorded and answered 500 SYSTEM_ERROR (fault injection). */
const ANSWER_LOST = '[sandbox:answer-lost]';
/** A reply containing it is refused as WeChat Pay refuses words it does not allow (fault injection). */
const SENSITIVE = '[sandbox:sensitive]';
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
    if (body.response_content.includes(SENSITIVE))
      throw paramError(`回复内容含有敏感词 (fault injection: ${SENSITIVE})`);
    desk.respond(c, body.response_content, images);
    if (body.response_content.includes(ANSWER_LOST)) {
      // Fault injection: the reply is taken and its answer lost, as when WeChat Pay fails after committing.
      throw new WechatpayError(500, 'SYSTEM_ERROR', `系统错误 (fault injection: ${ANSWER_LOST})`);
    }
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
