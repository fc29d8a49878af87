import { ChannelError } from '../../src/channels/errors';
import {
  APPLYMENT_STATES,
  applymentStateOf,
  checkApplyment,
  mediaMeta,
  submittedStateOf,
  toWireApplyment,
} from '../../src/channels/wechatpay/applyment';
import { APPLICANT, applymentData } from '../support/wechatpay-applyment';

const MEDIA = { licenseCopy: 'V1_license', idCardCopy: 'V1_front', idCardNational: 'V1_back' };
const MERCHANT: {
  merchantId: string;
  merchantName: string;
  licenseNo: string | null;
  legalPerson: string | null;
  bankAccount: string | null;
} = { merchantId: 'M1', merchantName: 'Tea House', licenseNo: null, legalPerson: null, bankAccount: null };

type Tree = Record<string, unknown>;

/** The value at a dotted path of a JSON tree. */
function at(tree: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Tree)[k], tree);
}

/** Deletes the field at a dotted path. */
function drop(tree: Tree, path: string): void {
  const keys = path.split('.');
  const last = keys.pop()!;
  delete ((keys.length === 0 ? tree : at(tree, keys.join('.'))) as Tree)[last];
}

const input = (submitData: Record<string, unknown>, merchant: Partial<typeof MERCHANT> = {}) => ({
  applicationId: 'apl_abcdefghijklmnopqrst',
  merchant: { ...MERCHANT, ...merchant },
  submitData,
});

describe('applyment state mapping', () => {
  const expected: Record<string, string> = {
    APPLYMENT_STATE_EDITTING: 'submitted',
    APPLYMENT_STATE_AUDITING: 'auditing',
    APPLYMENT_STATE_REJECTED: 'rejected',
    APPLYMENT_STATE_TO_BE_CONFIRMED: 'to_be_confirmed',
    APPLYMENT_STATE_TO_BE_SIGNED: 'to_be_signed',
    APPLYMENT_STATE_SIGNING: 'auditing',
    APPLYMENT_STATE_FINISHED: 'finished',
    APPLYMENT_STATE_CANCELED: 'canceled',
  };

  test.each(APPLYMENT_STATES.map((s) => [s]))(
    'when WeChat Pay answers %s, then the status is the mapped one',
    (state) => {
      const answer = { applyment_id: 2000001234567890, applyment_state: state, sub_mchid: '1600000001' };
      const mapped = applymentStateOf(answer);
      expect(mapped.status).toBe(expected[state]);
      expect(mapped.channelApplicationNo).toBe('2000001234567890');
      expect(mapped.detail).toMatchObject({ applyment_state: state });
    },
  );

  test('when an applyment is rejected, then the reason lists each audit_detail field and reason', () => {
    const mapped = applymentStateOf({
      applyment_id: 1,
      applyment_state: 'APPLYMENT_STATE_REJECTED',
      audit_detail: [
        { field: 'id_card_copy', field_name: '身份证人像面照片', reject_reason: '照片模糊' },
        { field: 'license_copy', field_name: '', reject_reason: '已过期' },
      ],
    });
    expect(mapped.rejectReason).toBe('身份证人像面照片: 照片模糊; license_copy: 已过期');
    expect(mapped.subMerchantNo).toBeNull();
  });

  test('when a finished applyment carries no sub_mchid, then the answer is unreadable', () => {
    expect(() => applymentStateOf({ applyment_id: 1, applyment_state: 'APPLYMENT_STATE_FINISHED' })).toThrow(
      expect.objectContaining({ kind: 'invalid_response' }),
    );
  });

  test('when the state is one WeChat Pay does not document, then the answer is unreadable', () => {
    expect(() => applymentStateOf({ applyment_id: 1, applyment_state: 'APPLYMENT_STATE_FROZEN' })).toThrow(
      ChannelError,
    );
  });

  test('when a submit answers its applyment_id, then the application is submitted under it', () => {
    expect(submittedStateOf({ applyment_id: 2000001234567890 })).toMatchObject({
      status: 'submitted',
      channelApplicationNo: '2000001234567890',
    });
  });
});

describe('applyment body', () => {
  test('when an applyment is built, then exactly the sensitive fields are sealed, arrays included, and business_code is the application_id', () => {
    const data = applymentData(MEDIA);
    (at(data, 'subject_info') as Tree).ubo_info_list = [
      { ubo_id_doc_type: 'IDENTIFICATION_TYPE_IDCARD', ubo_id_doc_number: '110' },
    ];
    const body = toWireApplyment(input(data), (plain) => `sealed(${plain})`);
    expect(body.business_code).toBe('apl_abcdefghijklmnopqrst');
    expect(at(body, 'contact_info.contact_name')).toBe(`sealed(${APPLICANT.idCardName})`);
    expect(at(body, 'contact_info.mobile_phone')).toBe(`sealed(${APPLICANT.mobilePhone})`);
    expect(at(body, 'contact_info.contact_type')).toBe('LEGAL');
    expect(at(body, 'subject_info.identity_info.id_card_info.id_card_number')).toBe(
      `sealed(${APPLICANT.idCardNumber})`,
    );
    expect(at(body, 'subject_info.identity_info.id_card_info.id_card_copy')).toBe('V1_front');
    expect(at(body, 'subject_info.ubo_info_list')).toEqual([
      { ubo_id_doc_type: 'IDENTIFICATION_TYPE_IDCARD', ubo_id_doc_number: 'sealed(110)' },
    ]);
    expect(at(body, 'bank_account_info.account_number')).toBe(`sealed(${APPLICANT.accountNumber})`);
    expect(at(body, 'bank_account_info.account_bank')).toBe('招商银行');
  });

  test('when submit_data leaves out what the merchant record holds, then the record fills it', () => {
    const data = applymentData(MEDIA);
    drop(data, 'subject_info.business_license_info.license_number');
    drop(data, 'subject_info.business_license_info.merchant_name');
    drop(data, 'business_info.merchant_shortname');
    drop(data, 'bank_account_info.account_number');
    const body = checkApplyment(
      input(data, { licenseNo: 'LIC-1', bankAccount: '6214000011112222', merchantName: 'Tea House' }),
    );
    expect(at(body, 'subject_info.business_license_info')).toMatchObject({
      license_number: 'LIC-1',
      merchant_name: 'Tea House',
    });
    expect(at(body, 'business_info.merchant_shortname')).toBe('Tea House');
    expect(at(body, 'bank_account_info.account_number')).toBe('6214000011112222');
  });

  test.each([
    ['contact_info.contact_email', 'submit_data.contact_info.contact_email: is required'],
    ['settlement_info', 'submit_data.settlement_info: is required'],
    [
      'subject_info.business_license_info',
      'submit_data.subject_info.business_license_info.license_copy: is required',
    ],
  ])('when %s is missing, then the refusal names it', (path, message) => {
    const data = applymentData(MEDIA);
    drop(data, path);
    expect(() => checkApplyment(input(data))).toThrow(message);
  });

  test.each([
    ['subject_info.identity_info.id_card_info', 'id_card_number', '11010519491231002'],
    ['bank_account_info', 'account_number', '6214-8300-0000-0001'],
  ])(
    'when %s.%s is malformed, then the refusal names the field and never echoes the value',
    (parent, field, value) => {
      const data = applymentData(MEDIA);
      (at(data, parent) as Tree)[field] = value;
      let message = '';
      try {
        checkApplyment(input(data));
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe(`submit_data.${parent}.${field}: is not in the required format`);
      expect(message).not.toContain(value);
    },
  );

  test('when an identity number is malformed, then the refusal names the field', () => {
    const data = applymentData(MEDIA);
    (at(data, 'subject_info.identity_info.id_card_info') as Tree).id_card_number = '12345';
    expect(() => checkApplyment(input(data))).toThrow(
      /^submit_data\.subject_info\.identity_info\.id_card_info\.id_card_number: /,
    );
  });
});

describe('media meta', () => {
  const file = (mediaType: string, size = 10, fileName = 'scan.jpeg') => ({
    fileName,
    mediaType,
    content: Buffer.alloc(size),
  });

  test('when an image is uploaded, then its meta names it with the extension of its type and carries the digest', () => {
    expect(mediaMeta(file('image/png', 10, 'licence.JPG'), 'ab')).toEqual({
      filename: 'licence.png',
      sha256: 'ab',
    });
    expect(mediaMeta(file('image/jpeg', 10, 'noext'), 'cd')).toEqual({ filename: 'noext.jpg', sha256: 'cd' });
  });

  test('when a PDF or an image over 2 MiB is uploaded, then it is refused before it travels', () => {
    expect(() => mediaMeta(file('application/pdf'), 'ab')).toThrow(/JPEG, PNG or BMP/);
    expect(() => mediaMeta(file('image/png', 2 * 1024 * 1024 + 1), 'ab')).toThrow(/2 MiB/);
  });
});
