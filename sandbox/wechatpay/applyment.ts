// Longer than 400 lines: the sandbox's whole onboarding (its records and checks, its routes and the
// merchant's page) in the one file router.ts mounts it from, as sharing.ts is for profit sharing.
/**
 * The WeChat Pay sandbox's onboarding of sub-merchants (特约商户进件, applyment4sub): media
 * upload (multipart, signed over its `meta`), the applyment submit with its sealed fields, the
 * queries by business_code and by applyment_id, and a page where the merchant's administrator
 * confirms the account or signs. In memory, like the orders.
 *
 * An applyment moves one step each time it is queried: EDITTING → AUDITING → FINISHED (with a
 * new sub_mchid), unless `business_info.merchant_shortname` steers it with a marker:
 * `[sandbox:rejected]` (REJECTED with audit_detail), `[sandbox:to-be-signed]` (TO_BE_SIGNED
 * until signed at its sign_url, then SIGNING, then FINISHED) or `[sandbox:to-be-confirmed]`
 * (TO_BE_CONFIRMED until confirmed, then as to-be-signed).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { escapeHtml } from '../html';
import { jsonBody, pageOrScriptBody, paramError, validate } from './http';
import { WechatpayError, randomDigits } from './wire';

export type ApplymentState =
  | 'APPLYMENT_STATE_EDITTING'
  | 'APPLYMENT_STATE_AUDITING'
  | 'APPLYMENT_STATE_REJECTED'
  | 'APPLYMENT_STATE_TO_BE_CONFIRMED'
  | 'APPLYMENT_STATE_TO_BE_SIGNED'
  | 'APPLYMENT_STATE_SIGNING'
  | 'APPLYMENT_STATE_FINISHED'
  | 'APPLYMENT_STATE_CANCELED';

const STATE_MESSAGES: Record<ApplymentState, string> = {
  APPLYMENT_STATE_EDITTING: '编辑中',
  APPLYMENT_STATE_AUDITING: '审核中',
  APPLYMENT_STATE_REJECTED: '已驳回',
  APPLYMENT_STATE_TO_BE_CONFIRMED: '待账户验证',
  APPLYMENT_STATE_TO_BE_SIGNED: '待签约',
  APPLYMENT_STATE_SIGNING: '开通权限中',
  APPLYMENT_STATE_FINISHED: '已完成',
  APPLYMENT_STATE_CANCELED: '已作废',
};

/** The fields the applyment documentation marks 敏感信息加密 (sealed with the platform key). */
const SEALED_FIELDS = new Set([
  'contact_name',
  'contact_id_number',
  'mobile_phone',
  'contact_email',
  'id_card_name',
  'id_card_number',
  'id_card_address',
  'id_doc_name',
  'id_doc_number',
  'id_doc_address',
  'ubo_id_doc_name',
  'ubo_id_doc_number',
  'ubo_id_doc_address',
  'account_name',
  'account_number',
]);

/** Fields whose value is a media_id (or a list of them). */
const MEDIA_FIELD = /(_copy|_national|_pic|_pics|_photo|qualifications)$/;

const IMAGE_TYPES: { extension: RegExp; magic: Buffer }[] = [
  { extension: /\.(jpe?g)$/i, magic: Buffer.from([0xff, 0xd8, 0xff]) },
  { extension: /\.png$/i, magic: Buffer.from([0x89, 0x50, 0x4e, 0x47]) },
  { extension: /\.bmp$/i, magic: Buffer.from([0x42, 0x4d]) },
];
const MAX_MEDIA_BYTES = 2 * 1024 * 1024;

export interface MediaRecord {
  mediaId: string;
  mchid: string;
  filename: string;
  sha256: string;
  size: number;
}

export interface ApplymentRecord {
  mchid: string;
  businessCode: string;
  applymentId: number;
  token: string;
  state: ApplymentState;
  subMchid?: string;
  /** The body as submitted, every sealed field opened: what a test checks the client sealed. */
  body: Record<string, unknown>;
  /** The Wechatpay-Serial the sealed fields came under. */
  sealedWith?: string;
  auditDetail?: { field: string; field_name: string; reject_reason: string }[];
  /** What the marker asks for once the audit passes. */
  path: 'finish' | 'reject' | 'sign' | 'confirm';
}

const text = (max: number) => Joi.string().min(1).max(max);
const media = text(256);
const phone = Joi.string().pattern(/^\+?\d[\d-]{4,19}$/);

/** The applyment body after its sealed fields were opened: the required core, as documented. */
const applymentSchema = Joi.object({
  business_code: Joi.string()
    .pattern(/^[A-Za-z0-9_]{1,124}$/)
    .required(),
  contact_info: Joi.object({
    contact_name: text(64).required(),
    mobile_phone: phone.required(),
    contact_email: Joi.string().email({ tlds: false }).required(),
  })
    .unknown(true)
    .required(),
  subject_info: Joi.object({
    subject_type: Joi.string()
      .pattern(/^SUBJECT_TYPE_[A-Z]+$/)
      .required(),
    business_license_info: Joi.object({
      license_copy: media.required(),
      license_number: text(64).required(),
      merchant_name: text(128).required(),
      legal_person: text(64).required(),
    }).unknown(true),
    identity_info: Joi.object({ id_doc_type: Joi.string().required() }).unknown(true).required(),
  })
    .unknown(true)
    .required(),
  business_info: Joi.object({
    merchant_shortname: text(64).required(),
    service_phone: phone.required(),
    sales_info: Joi.object({ sales_scenes_type: Joi.array().items(Joi.string()).min(1).required() })
      .unknown(true)
      .required(),
  })
    .unknown(true)
    .required(),
  settlement_info: Joi.object({ settlement_id: text(16).required() })
    .unknown(true)
    .required(),
  bank_account_info: Joi.object({
    bank_account_type: Joi.string().required(),
    account_name: text(128).required(),
    account_bank: text(128).required(),
    bank_address_code: Joi.string().required(),
    account_number: Joi.string()
      .pattern(/^\d{4,40}$/)
      .required(),
  })
    .unknown(true)
    .required(),
})
  .unknown(true)
  .required();

const signSchema = Joi.object<{ action: 'confirm' | 'sign' }>({
  action: Joi.string().valid('confirm', 'sign').required(),
}).required();

export class WechatpayApplymentStore {
  private readonly media = new Map<string, MediaRecord>();
  private readonly byCode = new Map<string, ApplymentRecord>();
  private readonly byId = new Map<number, ApplymentRecord>();
  private readonly byToken = new Map<string, ApplymentRecord>();

  upload(mchid: string, meta: { filename: string; sha256: string }, bytes: Buffer): MediaRecord {
    const record: MediaRecord = {
      mediaId: `V1_${randomBytes(33).toString('base64url')}`,
      mchid,
      filename: meta.filename,
      sha256: meta.sha256,
      size: bytes.length,
    };
    this.media.set(record.mediaId, record);
    return record;
  }

  hasMedia(mchid: string, mediaId: string): boolean {
    return this.media.get(mediaId)?.mchid === mchid;
  }

  submit(mchid: string, body: Record<string, unknown>): ApplymentRecord {
    const businessCode = String(body.business_code);
    const key = `${mchid}:${businessCode}`;
    if (this.byCode.has(key)) {
      throw new WechatpayError(400, 'INVALID_REQUEST', `业务申请编号 ${businessCode} 已存在`);
    }
    const shortname = String((body.business_info as Record<string, unknown>).merchant_shortname);
    const record: ApplymentRecord = {
      mchid,
      businessCode,
      applymentId: Number(`2000${randomDigits(12)}`),
      token: randomBytes(16).toString('hex'),
      state: 'APPLYMENT_STATE_EDITTING',
      body,
      path: shortname.includes('[sandbox:rejected]')
        ? 'reject'
        : shortname.includes('[sandbox:to-be-confirmed]')
          ? 'confirm'
          : shortname.includes('[sandbox:to-be-signed]')
            ? 'sign'
            : 'finish',
    };
    this.byCode.set(key, record);
    this.byId.set(record.applymentId, record);
    this.byToken.set(record.token, record);
    return record;
  }

  /** The applyment as a query finds it, after the one step a query moves it. */
  query(mchid: string, by: { businessCode: string } | { applymentId: number }): ApplymentRecord | undefined {
    const record =
      'businessCode' in by ? this.byCode.get(`${mchid}:${by.businessCode}`) : this.byId.get(by.applymentId);
    if (!record || record.mchid !== mchid) return undefined;
    this.advance(record);
    return record;
  }

  /** An applyment by its business_code, unmoved: the sandbox's reader. */
  peek(mchid: string, businessCode: string): ApplymentRecord | undefined {
    return this.byCode.get(`${mchid}:${businessCode}`);
  }

  /** The finished applyment that issued a sub_mchid to this service provider, if any. */
  bySubMchid(mchid: string, subMchid: string): ApplymentRecord | undefined {
    for (const record of this.byCode.values()) {
      if (record.mchid === mchid && record.subMchid === subMchid) return record;
    }
    return undefined;
  }

  byPageToken(token: string): ApplymentRecord | undefined {
    return this.byToken.get(token);
  }

  /** The administrator at the sign_url: confirms the account, or signs. */
  act(record: ApplymentRecord, action: 'confirm' | 'sign'): void {
    if (action === 'confirm' && record.state === 'APPLYMENT_STATE_TO_BE_CONFIRMED') {
      record.state = 'APPLYMENT_STATE_TO_BE_SIGNED';
    } else if (action === 'sign' && record.state === 'APPLYMENT_STATE_TO_BE_SIGNED') {
      record.state = 'APPLYMENT_STATE_SIGNING';
    } else {
      throw new WechatpayError(
        400,
        'INVALID_REQUEST',
        `applyment ${record.applymentId} is ${record.state}; it cannot be ${action === 'sign' ? 'signed' : 'confirmed'} now`,
      );
    }
  }

  private advance(record: ApplymentRecord): void {
    switch (record.state) {
      case 'APPLYMENT_STATE_EDITTING':
        record.state = 'APPLYMENT_STATE_AUDITING';
        return;
      case 'APPLYMENT_STATE_AUDITING':
        if (record.path === 'reject') {
          record.state = 'APPLYMENT_STATE_REJECTED';
          record.auditDetail = [
            {
              field: 'business_info.merchant_shortname',
              field_name: '商户简称',
              reject_reason: 'the short name must be the name buyers know the business by',
            },
          ];
        } else if (record.path === 'confirm') {
          record.state = 'APPLYMENT_STATE_TO_BE_CONFIRMED';
        } else if (record.path === 'sign') {
          record.state = 'APPLYMENT_STATE_TO_BE_SIGNED';
        } else {
          this.finish(record);
        }
        return;
      case 'APPLYMENT_STATE_SIGNING':
        this.finish(record);
        return;
      default:
        return;
    }
  }

  private finish(record: ApplymentRecord): void {
    record.state = 'APPLYMENT_STATE_FINISHED';
    record.subMchid = `16${randomDigits(8)}`;
  }
}

/** The query answer: business_code, applyment_id, sub_mchid, sign_url, state and audit detail. */
export function applymentView(record: ApplymentRecord, signUrl: string): Record<string, unknown> {
  const signing = ['APPLYMENT_STATE_TO_BE_CONFIRMED', 'APPLYMENT_STATE_TO_BE_SIGNED'].includes(record.state);
  return {
    business_code: record.businessCode,
    applyment_id: record.applymentId,
    ...(record.subMchid ? { sub_mchid: record.subMchid } : {}),
    ...(signing ? { sign_url: signUrl } : {}),
    applyment_state: record.state,
    applyment_state_msg: STATE_MESSAGES[record.state],
    ...(record.auditDetail ? { audit_detail: record.auditDetail } : {}),
  };
}

/** A multipart upload parsed from its exact bytes: its `meta` text (what is signed) and its file. */
export interface MediaForm {
  meta: string;
  file: File;
}

/** Reads a media upload's multipart body (the WHATWG parser Node ships), or says why it cannot. */
export async function readMediaForm(req: Request): Promise<MediaForm> {
  const contentType = req.get('Content-Type') ?? '';
  let form: FormData;
  try {
    form = await new Response(req.rawBody ?? Buffer.alloc(0), {
      headers: { 'Content-Type': contentType },
    }).formData();
  } catch {
    throw paramError('the body is not multipart/form-data with a boundary');
  }
  const meta = form.get('meta');
  const file = form.get('file');
  if (typeof meta !== 'string') throw paramError('the meta part (JSON text) is required');
  if (file === null || typeof file === 'string')
    throw paramError('the file part (with a filename) is required');
  return { meta, file };
}

export interface ApplymentRouteDeps {
  store: WechatpayApplymentStore;
  /** Where pages are reached, e.g. http://127.0.0.1:8080/wechatpay. */
  base: string;
  answer(res: Response, status: number, body?: unknown): void;
  /** A sealed field's plaintext, the request naming the platform key, or PARAM_ERROR. */
  unseal(req: Request, ciphertext: string, field: string): string;
  log(message: string, meta: Record<string, unknown>): void;
}

const mediaMetaSchema = Joi.object<{ filename: string; sha256: string }>({
  filename: Joi.string().min(1).max(128).required(),
  sha256: Joi.string()
    .pattern(/^[0-9a-f]{64}$/i)
    .required(),
}).required();

/** The media and applyment endpoints and the sign page, on the sandbox's router. */
export function applymentRoutes(router: Router, deps: ApplymentRouteDeps): void {
  const { store, answer } = deps;
  const signUrl = (record: ApplymentRecord) => `${deps.base}/applyment/sign/${record.token}`;

  router.post('/v3/merchant/media/upload', async (req, res) => {
    const form = (res.locals.mediaForm as MediaForm | undefined) ?? (await readMediaForm(req));
    let metaJson: unknown;
    try {
      metaJson = JSON.parse(form.meta);
    } catch {
      throw paramError('meta is not JSON');
    }
    const meta = validate(mediaMetaSchema, metaJson);
    const bytes = Buffer.from(await form.file.arrayBuffer());
    const type = IMAGE_TYPES.find((t) => t.extension.test(meta.filename));
    if (!type)
      throw paramError('只支持JPG、BMP、PNG格式的图片: meta.filename must end .jpg, .jpeg, .bmp or .png');
    if (bytes.length === 0 || bytes.length > MAX_MEDIA_BYTES) throw paramError('图片大小须在 0 到 2M 之间');
    if (!bytes.subarray(0, type.magic.length).equals(type.magic)) {
      throw paramError(`the file is not the image its name ${meta.filename} says`);
    }
    if (createHash('sha256').update(bytes).digest('hex') !== meta.sha256.toLowerCase()) {
      throw paramError('meta.sha256 is not the SHA-256 of the file');
    }
    const record = store.upload(String(res.locals.mchid), meta, bytes);
    deps.log('wechatpay sandbox media uploaded', { media_id: record.mediaId, size: record.size });
    answer(res, 200, { media_id: record.mediaId });
  });

  /** Opens every sealed field and checks every media_id was uploaded by this service provider. */
  function open(req: Request, mchid: string, value: unknown, path: string, key?: string): unknown {
    if (Array.isArray(value)) return value.map((v, i) => open(req, mchid, v, `${path}[${i}]`, key));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          k,
          open(req, mchid, v, path === '' ? k : `${path}.${k}`, k),
        ]),
      );
    }
    if (typeof value !== 'string' || key === undefined) return value;
    if (SEALED_FIELDS.has(key)) return deps.unseal(req, value, path);
    if (MEDIA_FIELD.test(key) && !store.hasMedia(mchid, value)) {
      throw paramError(`${path}: media_id ${value} was not uploaded by this merchant`);
    }
    return value;
  }

  router.post('/v3/applyment4sub/applyment/', (req, res) => {
    const mchid = String(res.locals.mchid);
    const raw = jsonBody(req);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw paramError('a JSON object is expected');
    const body = validate(applymentSchema, open(req, mchid, raw, '')) as Record<string, unknown>;
    const record = store.submit(mchid, body);
    record.sealedWith = req.get('Wechatpay-Serial');
    deps.log('wechatpay sandbox applyment submitted', {
      business_code: record.businessCode,
      applyment_id: record.applymentId,
    });
    answer(res, 200, { applyment_id: record.applymentId });
  });

  router.get('/v3/applyment4sub/applyment/business_code/:business_code', (req, res) => {
    const record = store.query(String(res.locals.mchid), { businessCode: req.params.business_code });
    if (!record) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '申请单不存在');
    answer(res, 200, applymentView(record, signUrl(record)));
  });

  router.get('/v3/applyment4sub/applyment/applyment_id/:applyment_id', (req, res) => {
    const id = req.params.applyment_id;
    if (!/^\d{1,20}$/.test(id)) throw paramError('applyment_id is a number');
    const record = store.query(String(res.locals.mchid), { applymentId: Number(id) });
    if (!record) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '申请单不存在');
    answer(res, 200, applymentView(record, signUrl(record)));
  });

  // The page the sign_url opens, where the merchant's administrator confirms the account or signs.
  router.get('/applyment/sign/:token', (req, res) => {
    const record = store.byPageToken(req.params.token);
    res
      .set('Cache-Control', 'no-store')
      .set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'");
    if (!record) {
      res.status(404).type('html').send('<!doctype html><title>Not found</title><p>No such applyment.</p>');
      return;
    }
    res.type('html').send(signPage(record));
  });

  router.post('/applyment/sign/:token', (req, res) => {
    const record = store.byPageToken(req.params.token);
    if (!record) throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '申请单不存在');
    const { body, fromPage } = pageOrScriptBody(req);
    const { action } = validate(signSchema, body);
    store.act(record, action);
    deps.log('wechatpay sandbox applyment ' + (action === 'sign' ? 'signed' : 'confirmed'), {
      business_code: record.businessCode,
    });
    if (fromPage) {
      res.redirect(303, req.originalUrl);
      return;
    }
    answer(res, 200, { applyment_state: record.state });
  });
}

function signPage(record: ApplymentRecord): string {
  const action =
    record.state === 'APPLYMENT_STATE_TO_BE_CONFIRMED'
      ? { value: 'confirm', label: 'Confirm the settlement account' }
      : record.state === 'APPLYMENT_STATE_TO_BE_SIGNED'
        ? { value: 'sign', label: 'Sign the agreement' }
        : undefined;
  const shortname = String((record.body.business_info as Record<string, unknown>).merchant_shortname);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>WeChat Pay sandbox — applyment ${record.applymentId}</title>
<style>body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; }</style></head>
<body><h1>durapay WeChat Pay sandbox: onboarding</h1>
<p>${escapeHtml(shortname)}</p>
<dl><dt>business_code</dt><dd>${escapeHtml(record.businessCode)}</dd>
<dt>applyment_state</dt><dd>${escapeHtml(record.state)} (${escapeHtml(STATE_MESSAGES[record.state])})</dd></dl>
${action ? `<form method="post"><input type="hidden" name="action" value="${action.value}"><button type="submit">${action.label}</button></form>` : '<p>Nothing to do here.</p>'}
</body></html>
`;
}
