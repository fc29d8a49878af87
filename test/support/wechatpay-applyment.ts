/**
 * An applyment for a small enterprise as WeChat Pay's applyment4sub documentation describes it,
 * sensitive fields in plain text (durapay's submit_data; a direct client seals them first), and
 * image bytes each type of upload starts with, and uploads through durapay's API.
 */
import type { AppCredentials } from '../../src/modules/apps/repository';
import { signRequest } from '../../src/platform/crypto/http-signature';
import { envelope } from './http';
import { multipart } from './multipart';

/** A PNG's signature and header chunk: enough for a sandbox that reads the first bytes. */
export const PNG_BYTES = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('0000000d49484452000000010000000108060000001f15c489', 'hex'),
]);
export const JPEG_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
export const PDF_BYTES = Buffer.from('%PDF-1.4\n%âãÏÓ\n', 'latin1');

export interface ApplymentMedia {
  licenseCopy: string;
  idCardCopy: string;
  idCardNational: string;
}

/** The identity number and bank account a test looks for in plain text where it must not be. */
export const APPLICANT = {
  idCardNumber: '11010519491231002X',
  idCardName: '张三',
  accountNumber: '6214830000000000001',
  mobilePhone: '13800138000',
};

export function applymentData(media: ApplymentMedia, shortname = 'Tea House'): Record<string, unknown> {
  return {
    contact_info: {
      contact_type: 'LEGAL',
      contact_name: APPLICANT.idCardName,
      mobile_phone: APPLICANT.mobilePhone,
      contact_email: 'owner@tea-house.example',
    },
    subject_info: {
      subject_type: 'SUBJECT_TYPE_ENTERPRISE',
      business_license_info: {
        license_copy: media.licenseCopy,
        license_number: '91440300MA5EXAMPLE',
        merchant_name: 'Tea House Ltd',
        legal_person: APPLICANT.idCardName,
      },
      identity_info: {
        id_holder_type: 'LEGAL',
        id_doc_type: 'IDENTIFICATION_TYPE_IDCARD',
        id_card_info: {
          id_card_copy: media.idCardCopy,
          id_card_national: media.idCardNational,
          id_card_name: APPLICANT.idCardName,
          id_card_number: APPLICANT.idCardNumber,
          card_period_begin: '2020-01-01',
          card_period_end: '长期',
        },
        owner: true,
      },
    },
    business_info: {
      merchant_shortname: shortname,
      service_phone: '0755-86010000',
      sales_info: { sales_scenes_type: ['SALES_SCENES_STORE'] },
    },
    settlement_info: { settlement_id: '716', qualification_type: '餐饮' },
    bank_account_info: {
      bank_account_type: 'BANK_ACCOUNT_TYPE_CORPORATE',
      account_name: 'Tea House Ltd',
      account_bank: '招商银行',
      bank_address_code: '440300',
      account_number: APPLICANT.accountNumber,
    },
  };
}

/** One file through `POST /api/v1/merchant/upload-file` to WeChat Pay. */
export async function uploadToWechatpay(
  baseUrl: string,
  app: AppCredentials,
  content: Buffer,
  filename: string,
  mediaType: string,
) {
  const { body, contentType } = multipart([
    { name: 'channel_code', value: 'wechatpay' },
    { name: 'file_media_type', value: mediaType },
    { name: 'file', filename, contentType: mediaType, content },
  ]);
  const target = '/api/v1/merchant/upload-file';
  const signed = signRequest({ method: 'POST', target, body, keyId: app.app_id, secret: app.secret });
  const res = await fetch(`${baseUrl}${target}`, {
    method: 'POST',
    headers: { ...signed, 'content-type': contentType },
    body,
  });
  return { status: res.status, ...(await envelope<{ file_id: string }>(res)) };
}

/** The three images an enterprise applyment needs, uploaded; their media_ids. */
export async function applymentMedia(baseUrl: string, app: AppCredentials): Promise<ApplymentMedia> {
  const license = await uploadToWechatpay(baseUrl, app, PNG_BYTES, 'license.png', 'image/png');
  const front = await uploadToWechatpay(baseUrl, app, JPEG_BYTES, 'id-front.jpeg', 'image/jpeg');
  const back = await uploadToWechatpay(baseUrl, app, PNG_BYTES, 'id-back.png', 'image/png');
  for (const r of [license, front, back]) {
    if (r.code !== 'success') throw new Error(`upload failed: ${r.status} ${r.code} ${r.message}`);
  }
  return {
    licenseCopy: license.data!.file_id,
    idCardCopy: front.data!.file_id,
    idCardNational: back.data!.file_id,
  };
}
