/**
 * Onboarding a secondary merchant at Alipay (直付通, ant.merchant.expand.indirect.zft.*): what an
 * application's submit_data must hold, how it becomes the create body, and the images an upload
 * may carry. submit_data is the create body in Alipay's own field names: an integrator follows
 * Alipay's documentation; the merchant's record fills what it leaves out. `external_id` is
 * durapay's application_id, so a retried submit names the same application.
 */
import Joi from 'joi';
import { ChannelError } from '../errors';
import type { SubmitApplicationInput, UploadFileInput } from '../ports';

/** Images Alipay takes for onboarding: JPG, PNG or BMP of at most 10 MB. */
const IMAGE_TYPES: Record<string, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/bmp': 'bmp' };
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** The image_type an upload is sent as, refusing what Alipay would refuse, before it travels. */
export function imageTypeOf(input: UploadFileInput): string {
  const type = IMAGE_TYPES[input.mediaType];
  if (type === undefined) {
    throw new ChannelError(
      'refused',
      `Alipay takes JPEG, PNG or BMP images for onboarding, not ${input.mediaType}`,
    );
  }
  if (input.content.length > MAX_IMAGE_BYTES) {
    throw new ChannelError('refused', 'Alipay takes onboarding images of at most 10 MB');
  }
  return type;
}

const text = (max: number) => Joi.string().min(1).max(max);

/**
 * What Alipay requires of every secondary merchant, checked before anything is submitted so that a
 * missing field is a 400 naming it. Fields beyond these pass on as given: Alipay decides them.
 */
const zftSchema = Joi.object({
  name: text(128).required(),
  alias_name: text(64).required(),
  merchant_type: Joi.string().valid('01', '02', '03', '04', '05', '06', '07').required(),
  mcc: Joi.string()
    .pattern(/^[A-Z]?\d{4}(_\d+)?$/, 'an MCC code')
    .required(),
  cert_no: text(64).required(),
  cert_type: Joi.string()
    .pattern(/^\d{3}$/, 'a certificate type code')
    .required(),
  cert_image: text(128).required(),
  legal_name: text(64).required(),
  legal_cert_no: text(64).required(),
  contact_infos: Joi.array()
    .min(1)
    .items(
      Joi.object({
        name: text(64).required(),
        mobile: Joi.string()
          .pattern(/^\+?\d[\d-]{4,19}$/, 'a phone number')
          .required(),
      }).unknown(true),
    )
    .required(),
  service: Joi.array().min(1).items(text(64)).required(),
  alipay_logon_id: text(128).required(),
}).unknown(true);

/** The create body: submit_data, the merchant's record filling the gaps, keyed by application_id. */
export function toWireZft(input: SubmitApplicationInput): Record<string, unknown> {
  if (Object.hasOwn(input.submitData, 'external_id')) {
    throw new ChannelError(
      'refused',
      'submit_data.external_id is not allowed: durapay sends the application_id as the external_id',
    );
  }
  const merchant = input.merchant;
  const body: Record<string, unknown> = {
    ...(merchant.merchantName ? { name: merchant.merchantName } : {}),
    ...(merchant.licenseNo ? { cert_no: merchant.licenseNo } : {}),
    ...(merchant.legalPerson ? { legal_name: merchant.legalPerson } : {}),
    ...input.submitData,
    external_id: input.applicationId,
  };
  const { error } = zftSchema.validate(body, { abortEarly: true, convert: false });
  if (error) {
    // The path names the field; the message never quotes its value (identity numbers live here).
    const detail = error.details[0]!;
    const field = detail.path.join('.');
    throw new ChannelError(
      'refused',
      `submit_data.${field}: ${detail.type === 'any.required' ? 'is required' : 'is invalid'}`,
    );
  }
  return body;
}
