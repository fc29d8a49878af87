/**
 * Onboarding secondary merchants (直付通): image upload (ant.merchant.expand.indirect.image.upload,
 * multipart, only its non-file fields signed), the application (…zft.create, by external_id) and
 * its query (…zftorder.query). An application moves one step each time it is queried, so a
 * poller sees progress: 031 (submitted, under audit) on the first query, then 99 (finished, with
 * an smid), or -1 (rejected) when its name holds `[sandbox:rejected]`. In memory, like the trades.
 */
import { randomBytes } from 'node:crypto';
import Joi from 'joi';
import type { Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import { beijingTime, businessFailed, invalidArgument, randomDigits, userId } from './wire';

export type ZftStatus = '031' | '99' | '-1';

/** The order as zftorder.query lists it. */
export interface ZftOrderView {
  order_id: string;
  external_id: string;
  merchant_name: string;
  status: ZftStatus;
  apply_time: string;
  fk_audit: 'CREATE' | 'PASS' | 'REJECT';
  kz_audit: 'CREATE' | 'PASS' | 'SKIP';
  sub_confirm?: 'FINISH';
  fk_audit_memo?: string;
  reason?: string;
  smid?: string;
}

/** An application as tests read it: the biz_content as submitted, and the order's state over it. */
export type AlipaySandboxZftOrder = Record<string, unknown> & ZftOrderView;

interface ZftRecord extends ZftOrderView {
  /** biz_content as submitted. */
  request: Record<string, unknown>;
  /** Queries answered so far: the next one moves it on. */
  queried: number;
  identity: string;
}

/** Images Alipay takes for onboarding, by their leading bytes; 10 MB at most. */
const IMAGE_MAGIC: Record<string, Buffer> = {
  jpg: Buffer.from([0xff, 0xd8, 0xff]),
  jpeg: Buffer.from([0xff, 0xd8, 0xff]),
  png: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
  bmp: Buffer.from([0x42, 0x4d]),
};
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

const text = (max: number) => Joi.string().min(1).max(max);

/**
 * The create body's required core, as documented: merchant types 01–07, their certificate, the
 * contacts (name and mobile), the services, and where it settles. Other fields pass as sent.
 */
const zftSchema = Joi.object({
  external_id: text(64).required(),
  name: text(128).required(),
  alias_name: text(64).required(),
  merchant_type: Joi.string().valid('01', '02', '03', '04', '05', '06', '07').required(),
  mcc: Joi.string()
    .pattern(/^[A-Z]?\d{4}(_\d+)?$/)
    .required(),
  cert_no: text(64).required(),
  cert_type: Joi.string()
    .pattern(/^\d{3}$/)
    .required(),
  cert_image: text(256),
  legal_name: text(64),
  legal_cert_no: text(64),
  contact_infos: Joi.array()
    .items(Joi.object({ name: text(64).required(), mobile: text(32).required() }).unknown(true))
    .min(1)
    .required(),
  service: Joi.array().items(text(64)).min(1).required(),
  sign_time_with_isv: Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/),
  alipay_logon_id: text(128),
  binding_alipay_logon_id: text(128),
  default_settle_rule: Joi.object({
    default_settle_type: Joi.string().valid('alipayAccount', 'bankCard').required(),
    default_settle_target: text(128).required(),
  }).unknown(true),
})
  .when(Joi.object({ merchant_type: Joi.valid('06') }).unknown(), {
    otherwise: Joi.object({
      cert_image: text(256).required(),
      legal_name: text(64).required(),
      legal_cert_no: text(64).required(),
    }),
  })
  .required();

const querySchema = Joi.object<{ external_id?: string; order_id?: string }>({
  external_id: text(64),
  order_id: text(64),
})
  .or('external_id', 'order_id')
  .required();

/** Fields whose value is an image_id (or a list of them) that this gateway must have issued. */
const IMAGE_FIELD = /_images?$/;

export class ZftBook {
  private readonly images = new Map<string, { type: string; size: number }>();
  private readonly byExternalId = new Map<string, ZftRecord>();
  private readonly byOrderId = new Map<string, ZftRecord>();

  upload(type: string, bytes: Buffer): string {
    const id = randomBytes(16).toString('hex');
    this.images.set(id, { type, size: bytes.length });
    return id;
  }

  /** Every image field names an image uploaded here, or the field is named in the refusal. */
  private checkImages(value: unknown, path: string, key?: string): void {
    if (Array.isArray(value)) {
      value.forEach((v, i) => this.checkImages(v, `${path}[${i}]`, key));
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) this.checkImages(v, path ? `${path}.${k}` : k, k);
    } else if (
      typeof value === 'string' &&
      key !== undefined &&
      IMAGE_FIELD.test(key) &&
      !this.images.has(value)
    ) {
      throw invalidArgument(
        'isv.invalid-parameter',
        `参数无效 ${path}: ${value} is not an image_id this gateway issued`,
      );
    }
  }

  create(request: Record<string, unknown>, now: number): { record: ZftRecord; created: boolean } {
    this.checkImages(request, '');
    const externalId = String(request.external_id);
    const identity = JSON.stringify(request);
    const existing = this.byExternalId.get(externalId);
    if (existing && existing.identity === identity) return { record: existing, created: false };
    // A rejected application may be submitted again, corrected, under the same external_id.
    if (existing && existing.status !== '-1') {
      throw businessFailed(
        'EXTERNAL_ID_REPEAT',
        `external_id ${externalId} names an application in progress with other content`,
      );
    }
    const record: ZftRecord = {
      order_id: `${beijingTime(now).slice(0, 10).replaceAll('-', '')}${randomDigits(20)}`,
      external_id: externalId,
      merchant_name: String(request.name),
      status: '031',
      apply_time: beijingTime(now),
      fk_audit: 'CREATE',
      kz_audit: 'CREATE',
      request: structuredClone(request),
      queried: 0,
      identity,
    };
    this.byExternalId.set(externalId, record);
    this.byOrderId.set(record.order_id, record);
    return { record, created: true };
  }

  /** The application as this query answers it; the next query sees it one step further. */
  query(ref: { external_id?: string; order_id?: string }): ZftOrderView {
    const record =
      ref.order_id !== undefined ? this.byOrderId.get(ref.order_id) : this.byExternalId.get(ref.external_id!);
    if (!record || (ref.external_id !== undefined && record.external_id !== ref.external_id)) {
      throw businessFailed('ORDER_NOT_EXIST', '申请单不存在');
    }
    if (record.queried++ > 0 && record.status === '031') decide(record);
    return orderView(record);
  }

  peek(externalId: string): AlipaySandboxZftOrder | undefined {
    const record = this.byExternalId.get(externalId);
    return record && { ...structuredClone(record.request), ...orderView(record) };
  }
}

/** The audit's outcome: finished with an smid, or rejected when the name asks for it. */
function decide(record: ZftRecord): void {
  if (record.merchant_name.includes('[sandbox:rejected]')) {
    record.status = '-1';
    record.fk_audit = 'REJECT';
    record.fk_audit_memo = '营业执照信息与商户名称不符 (fault injection: [sandbox:rejected])';
    record.reason = record.fk_audit_memo;
    return;
  }
  record.status = '99';
  record.fk_audit = 'PASS';
  record.kz_audit = 'PASS';
  record.sub_confirm = 'FINISH';
  record.smid = userId();
}

/** The wire view of an application: what zftorder.query lists (the submitted body stays here). */
function orderView(record: ZftRecord): ZftOrderView {
  const { request: _request, queried: _queried, identity: _identity, ...view } = record;
  return structuredClone(view);
}

export function zftHandlers(book: ZftBook): Record<string, Handler> {
  return {
    'ant.merchant.expand.indirect.image.upload': async (call) => {
      const imageType = call.params.image_type;
      if (!imageType) throw invalidArgument('isv.missing-parameter', '缺少必选参数 image_type');
      const magic = IMAGE_MAGIC[imageType.toLowerCase()];
      if (!magic) {
        throw invalidArgument(
          'isv.invalid-file-extension',
          `文件扩展名无效: image_type ${imageType}; jpg, png or bmp`,
        );
      }
      const file = call.files.get('image_content');
      if (!file) throw invalidArgument('isv.missing-parameter', '缺少必选参数 image_content (a file part)');
      const bytes = Buffer.from(await file.arrayBuffer());
      if (bytes.length === 0 || bytes.length > MAX_IMAGE_BYTES) {
        throw invalidArgument('isv.invalid-file-size', '文件大小无效: an image is at most 10 MB');
      }
      if (!bytes.subarray(0, magic.length).equals(magic)) {
        throw invalidArgument(
          'isv.invalid-file-extension',
          `文件扩展名无效: the file is not a ${imageType} image`,
        );
      }
      return { image_id: book.upload(imageType.toLowerCase(), bytes) };
    },

    'ant.merchant.expand.indirect.zft.create': (call) => {
      const request = validateBiz(zftSchema, parseBizContent(call.params)) as Record<string, unknown>;
      if (request.alipay_logon_id === undefined && request.biz_cards === undefined) {
        throw invalidArgument(
          'isv.missing-parameter',
          '缺少必选参数 alipay_logon_id (or biz_cards, to settle to a card)',
        );
      }
      const { record } = book.create(request, call.now);
      return { order_id: record.order_id };
    },

    'ant.merchant.expand.indirect.zftorder.query': (call) => {
      const biz = parseBizContent(call.params);
      if (biz.external_id === undefined && biz.order_id === undefined) {
        throw invalidArgument('isv.missing-parameter', '缺少必选参数 external_id (or order_id)');
      }
      return { orders: [book.query(validateBiz(querySchema, biz))] };
    },
  };
}
