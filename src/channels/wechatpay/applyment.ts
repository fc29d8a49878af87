// Longer than 300 lines: the applyment's required fields (its Joi schema is most of the file),
// the sealing, and the state mapping are one wire format, read together as transformers.ts is.
/**
 * Onboarding a sub-merchant at WeChat Pay (特约商户进件, applyment4sub): what an application's
 * submit_data must hold, how it becomes the applyment body (the merchant's record filling what
 * submit_data leaves out, sensitive fields sealed with the platform public key), the media an
 * upload may carry, and how an `applyment_state` maps to SPEC §5.7's statuses.
 *
 * submit_data is the applyment body in WeChat Pay's own field names, with the sensitive fields in
 * plain text: an integrator follows WeChat's documentation, and durapay seals what must be sealed.
 * `business_code` is durapay's application_id, so a retried submit names the same applyment.
 */
import Joi from 'joi';
import type { ApplicationStatus } from '../../modules/applications/rules';
import { ChannelError } from '../errors';
import type { ApplicationState, SubmitApplicationInput, UploadFileInput } from '../ports';

/** Media WeChat Pay takes for an applyment: JPG, BMP or PNG of at most 2 MiB (no PDF). */
export const MEDIA_TYPES: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/bmp': 'bmp',
};
export const MAX_MEDIA_BYTES = 2 * 1024 * 1024;

/** The `meta` of a media upload, refusing what WeChat Pay would refuse, before it travels. */
export function mediaMeta(input: UploadFileInput, sha256: string): { filename: string; sha256: string } {
  const extension = MEDIA_TYPES[input.mediaType];
  if (extension === undefined) {
    throw new ChannelError(
      'refused',
      `WeChat Pay takes JPEG, PNG or BMP images for onboarding, not ${input.mediaType}`,
    );
  }
  if (input.content.length > MAX_MEDIA_BYTES) {
    throw new ChannelError('refused', 'WeChat Pay takes onboarding images of at most 2 MiB');
  }
  // WeChat Pay reads the type from the name's extension: give it the one that matches the bytes.
  const base = input.fileName.replace(/\.[^.]*$/, '') || 'file';
  return { filename: `${base}.${extension}`, sha256 };
}

/**
 * The fields WeChat Pay wants sealed (RSA-OAEP under its public key), wherever they stand:
 * contact, identity document, beneficial owners and bank account.
 */
export const SENSITIVE_FIELDS: ReadonlySet<string> = new Set([
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

const text = (max: number) => Joi.string().min(1).max(max);
const mediaId = text(256);
const date = Joi.string().pattern(/^(\d{4}-\d{2}-\d{2}|长期)$/);

/**
 * What WeChat Pay requires of every applyment, checked before anything is submitted so that a
 * missing field is a 400 naming it, not an audit that fails later. Fields beyond these are
 * passed on as given: WeChat Pay's documentation decides them, and its answer is reported.
 */
const applymentSchema = Joi.object({
  contact_info: Joi.object({
    contact_type: Joi.string().valid('LEGAL', 'SUPER'),
    contact_name: text(64).required(),
    mobile_phone: Joi.string()
      .pattern(/^\+?\d[\d-]{4,19}$/)
      .required(),
    contact_email: Joi.string().email({ tlds: false }).max(128).required(),
  })
    .unknown(true)
    .required(),
  subject_info: Joi.object({
    subject_type: Joi.string()
      .valid(
        'SUBJECT_TYPE_INDIVIDUAL',
        'SUBJECT_TYPE_ENTERPRISE',
        'SUBJECT_TYPE_GOVERNMENT',
        'SUBJECT_TYPE_INSTITUTIONS',
        'SUBJECT_TYPE_OTHERS',
        'SUBJECT_TYPE_MICRO',
      )
      .required(),
    business_license_info: Joi.object({
      license_copy: mediaId.required(),
      license_number: text(64).required(),
      merchant_name: text(128).required(),
      legal_person: text(64).required(),
    })
      .unknown(true)
      // An individual business and an enterprise have a business licence.
      .when('subject_type', {
        is: Joi.valid('SUBJECT_TYPE_INDIVIDUAL', 'SUBJECT_TYPE_ENTERPRISE'),
        then: Joi.required(),
      }),
    identity_info: Joi.object({
      id_doc_type: Joi.string().required(),
      id_card_info: Joi.object({
        id_card_copy: mediaId.required(),
        id_card_national: mediaId.required(),
        id_card_name: text(64).required(),
        id_card_number: Joi.string()
          .pattern(/^\d{17}[\dXx]$|^\d{15}$/)
          .required(),
        card_period_begin: date.required(),
        card_period_end: date.required(),
      }).unknown(true),
    })
      .unknown(true)
      .required(),
  })
    .unknown(true)
    .required(),
  business_info: Joi.object({
    merchant_shortname: text(64).required(),
    service_phone: Joi.string()
      .pattern(/^\+?\d[\d-]{4,19}$/)
      .required(),
    sales_info: Joi.object({
      sales_scenes_type: Joi.array().items(Joi.string()).min(1).required(),
    })
      .unknown(true)
      .required(),
  })
    .unknown(true)
    .required(),
  settlement_info: Joi.object({ settlement_id: text(16).required() })
    .unknown(true)
    .required(),
  bank_account_info: Joi.object({
    bank_account_type: Joi.string()
      .valid('BANK_ACCOUNT_TYPE_CORPORATE', 'BANK_ACCOUNT_TYPE_PERSONAL')
      .required(),
    account_name: text(128).required(),
    account_bank: text(128).required(),
    bank_address_code: Joi.string()
      .pattern(/^\d{6}$/)
      .required(),
    account_number: Joi.string()
      .pattern(/^\d{4,40}$/)
      .required(),
  })
    .unknown(true)
    .required(),
})
  .unknown(true)
  .messages({ 'any.unknown': '{{#label}} is not allowed' });

type Json = Record<string, unknown>;

function objectAt(parent: Json, key: string): Json {
  const value = parent[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ...(value as Json) };
  return {};
}

/**
 * submit_data with what the merchant's record says and submit_data leaves out: the licence's
 * number, name and legal person, the short name, and the settlement account number.
 */
function withMerchantDefaults(input: SubmitApplicationInput): Json {
  const { merchant, submitData } = input;
  const body: Json = { ...submitData };
  const subject = objectAt(body, 'subject_info');
  if (
    subject.subject_type === 'SUBJECT_TYPE_INDIVIDUAL' ||
    subject.subject_type === 'SUBJECT_TYPE_ENTERPRISE'
  ) {
    const license = objectAt(subject, 'business_license_info');
    license.merchant_name ??= merchant.merchantName;
    if (merchant.licenseNo) license.license_number ??= merchant.licenseNo;
    if (merchant.legalPerson) license.legal_person ??= merchant.legalPerson;
    subject.business_license_info = license;
    body.subject_info = subject;
  }
  const business = objectAt(body, 'business_info');
  business.merchant_shortname ??= [...merchant.merchantName].slice(0, 64).join('');
  body.business_info = business;
  if (merchant.bankAccount) {
    const bank = objectAt(body, 'bank_account_info');
    bank.account_number ??= merchant.bankAccount;
    body.bank_account_info = bank;
  }
  return body;
}

/**
 * The applyment as WeChat Pay takes it, or a ChannelError('refused') naming the first
 * field of submit_data that is missing or wrong. `business_code` is durapay's.
 */
export function checkApplyment(input: SubmitApplicationInput): Json {
  if ('business_code' in input.submitData) {
    throw new ChannelError(
      'refused',
      'submit_data.business_code is not allowed: durapay sends the application_id as the business_code',
    );
  }
  const body = withMerchantDefaults(input);
  // Joi's pattern message quotes the value: an identity or account number must not be echoed.
  const { error } = applymentSchema.validate(body, {
    abortEarly: true,
    convert: false,
    messages: { 'string.pattern.base': '{{#label}} is not in the required format' },
  });
  if (error) {
    const detail = error.details[0]!;
    const path = ['submit_data', ...detail.path].join('.');
    throw new ChannelError('refused', `${path}: ${detail.message.replace(/^"[^"]*" /, '')}`);
  }
  return body;
}

/** The applyment body with every sensitive field sealed by `seal`, and durapay's business_code. */
export function toWireApplyment(input: SubmitApplicationInput, seal: (plain: string) => string): Json {
  const walk = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, walk(v, k)]));
    }
    if (key !== undefined && SENSITIVE_FIELDS.has(key) && typeof value === 'string') return seal(value);
    return value;
  };
  return { business_code: input.applicationId, ...(walk(checkApplyment(input)) as Json) };
}

export const APPLYMENT_STATES = [
  'APPLYMENT_STATE_EDITTING',
  'APPLYMENT_STATE_AUDITING',
  'APPLYMENT_STATE_REJECTED',
  'APPLYMENT_STATE_TO_BE_CONFIRMED',
  'APPLYMENT_STATE_TO_BE_SIGNED',
  'APPLYMENT_STATE_SIGNING',
  'APPLYMENT_STATE_FINISHED',
  'APPLYMENT_STATE_CANCELED',
] as const;
type ApplymentState = (typeof APPLYMENT_STATES)[number];

/**
 * SPEC §5.7's status of each applyment_state. EDITTING (WeChat's spelling) is a submission
 * WeChat Pay has not taken up yet: still `submitted`. SIGNING is WeChat opening the account's
 * permissions after the signature, with nothing left for the merchant to do: `auditing`.
 */
export const APPLYMENT_STATUS: Record<ApplymentState, ApplicationStatus> = {
  APPLYMENT_STATE_EDITTING: 'submitted',
  APPLYMENT_STATE_AUDITING: 'auditing',
  APPLYMENT_STATE_REJECTED: 'rejected',
  APPLYMENT_STATE_TO_BE_CONFIRMED: 'to_be_confirmed',
  APPLYMENT_STATE_TO_BE_SIGNED: 'to_be_signed',
  APPLYMENT_STATE_SIGNING: 'auditing',
  APPLYMENT_STATE_FINISHED: 'finished',
  APPLYMENT_STATE_CANCELED: 'canceled',
};

const applymentAnswerSchema = Joi.object({
  business_code: Joi.string(),
  applyment_id: Joi.alternatives(Joi.number().integer(), Joi.string()).required(),
  sub_mchid: Joi.string().allow(''),
  sign_url: Joi.string().allow(''),
  applyment_state: Joi.string()
    .valid(...APPLYMENT_STATES)
    .required(),
  applyment_state_msg: Joi.string().allow(''),
  audit_detail: Joi.array().items(
    Joi.object({
      field: Joi.string().allow(''),
      field_name: Joi.string().allow(''),
      reject_reason: Joi.string().allow(''),
    }).unknown(true),
  ),
});

interface ApplymentAnswer {
  applyment_id: number | string;
  sub_mchid?: string;
  sign_url?: string;
  applyment_state: ApplymentState;
  applyment_state_msg?: string;
  audit_detail?: { field?: string; field_name?: string; reject_reason?: string }[];
}

/** A query-by-business_code answer as durapay's application state. */
export function applymentStateOf(value: unknown): ApplicationState {
  const { error, value: parsed } = applymentAnswerSchema.validate(value, {
    allowUnknown: true,
    convert: false,
  });
  if (error) throw new ChannelError('invalid_response', `WeChat Pay applyment answer: ${error.message}`);
  const a = parsed as ApplymentAnswer;
  const status = APPLYMENT_STATUS[a.applyment_state];
  const subMerchantNo = a.sub_mchid ? a.sub_mchid : null;
  if (status === 'finished' && subMerchantNo === null) {
    throw new ChannelError('invalid_response', 'WeChat Pay applyment FINISHED without sub_mchid');
  }
  const reasons = (a.audit_detail ?? [])
    .map((d) => [d.field_name || d.field, d.reject_reason].filter(Boolean).join(': '))
    .filter((r) => r !== '');
  return {
    status,
    channelApplicationNo: String(a.applyment_id),
    subMerchantNo,
    signUrl: a.sign_url ? a.sign_url : null,
    rejectReason:
      status === 'rejected' || status === 'canceled'
        ? reasons.join('; ') || a.applyment_state_msg || 'rejected by WeChat Pay'
        : null,
    detail: {
      applyment_state: a.applyment_state,
      ...(a.applyment_state_msg ? { applyment_state_msg: a.applyment_state_msg } : {}),
      ...(a.audit_detail && a.audit_detail.length > 0 ? { audit_detail: a.audit_detail } : {}),
    },
  };
}

/** What a submit answers (`{applyment_id}`): the applyment is taken, its audit not begun. */
export function submittedStateOf(value: unknown): ApplicationState {
  const { error, value: parsed } = Joi.object({
    applyment_id: Joi.alternatives(Joi.number().integer(), Joi.string().min(1)).required(),
  }).validate(value, { allowUnknown: true, convert: false });
  if (error)
    throw new ChannelError('invalid_response', `WeChat Pay applyment submit answer: ${error.message}`);
  return {
    status: 'submitted',
    channelApplicationNo: String((parsed as { applyment_id: number | string }).applyment_id),
    subMerchantNo: null,
    signUrl: null,
    rejectReason: null,
    detail: { applyment_state: 'APPLYMENT_STATE_EDITTING' },
  };
}
