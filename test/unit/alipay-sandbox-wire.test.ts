/**
 * The offline Alipay gateway's wire against alipay-sdk's own reading of it: what the gateway
 * signs (answers, notifications) the SDK verifies, and what the SDK signs (requests) the gateway
 * accepts, while one changed byte on either side is refused.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { AlipaySdk } from 'alipay-sdk';
import { generateAlipaySandboxKeys, type AlipaySandboxKeys } from '../../sandbox/alipay';
import { signedForm } from '../../sandbox/alipay/notify';
import { checkCommonParams } from '../../sandbox/alipay/verify';
import {
  AlipayError,
  beijingTime,
  fenOfNumber,
  fenOfPrice,
  nextBeijingMidnight,
  parseBeijingTime,
  responseKey,
  rsa2Sign,
  rsa2Verify,
  signContent,
  signedAnswer,
  success,
  type Params,
} from '../../sandbox/alipay/wire';

let keys: AlipaySandboxKeys;
let sdk: AlipaySdk;

beforeAll(() => {
  keys = generateAlipaySandboxKeys();
  sdk = new AlipaySdk({
    appId: keys.appId,
    privateKey: keys.appPrivateKeyPem,
    keyType: 'PKCS8',
    alipayPublicKey: keys.alipayPublicKeyPem,
    camelcase: false,
  });
});

const alipayKey = () => createPrivateKey(keys.alipayPrivateKeyPem);
const app = () => ({ appId: keys.appId, publicKey: createPublicKey(keys.appPublicKeyPem) });

/** The form's fields as a receiver decodes them. */
const fieldsOf = (form: string): Params => Object.fromEntries(new URLSearchParams(form));

/** Flips one character of `text` at `index` to another of the same kind. */
function changeOneByte(text: string, index: number): string {
  const c = text[index]!;
  const other = c === 'A' ? 'B' : c === '1' ? '2' : c === '.' ? ',' : 'A';
  return `${text.slice(0, index)}${other}${text.slice(index + 1)}`;
}

function refusal(fn: () => void): AlipayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AlipayError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const notification: Params = {
  notify_time: '2026-11-24 04:01:02',
  notify_type: 'trade_status_sync',
  notify_id: '0c5bdb6d36bff6bd8d5f9dfd2f3f6dc4',
  app_id: '2021000000000001',
  charset: 'utf-8',
  version: '1.0',
  sign_type: 'RSA2',
  trade_no: '2026112422001234567890123456',
  out_trade_no: 'P202611240401020000000001',
  trade_status: 'TRADE_SUCCESS',
  total_amount: '88.88',
  subject: '测试 商品 & more = yes',
  gmt_payment: '2026-11-24 04:01:01',
  fund_bill_list: '[{"amount":"88.88","fundChannel":"ALIPAYACCOUNT"}]',
};

describe('the text a signature covers', () => {
  test('when parameters are signed, then they are sorted by key, empty values skipped, sign left out and values raw', () => {
    const content = signContent({
      timestamp: '2026-11-24 04:01:02',
      sign: 'ignored',
      biz_content: '{"subject":"a&b=c 中文"}',
      app_id: '2021',
      notify_url: '',
      method: 'alipay.trade.query',
    });
    expect(content).toBe(
      'app_id=2021&biz_content={"subject":"a&b=c 中文"}&method=alipay.trade.query&timestamp=2026-11-24 04:01:02',
    );
  });

  test('when sign_type is also left out, then it is missing from the text, as for a notification', () => {
    expect(signContent({ b: '2', sign_type: 'RSA2', a: '1', sign: 'x' }, ['sign', 'sign_type'])).toBe(
      'a=1&b=2',
    );
  });

  test('when content is signed with RSA2, then it verifies with the public key and not after a changed byte', () => {
    const content = 'a=1&b=中文';
    const signature = rsa2Sign(content, alipayKey());
    const publicKey = createPublicKey(keys.alipayPublicKeyPem);
    expect(rsa2Verify(content, signature, publicKey)).toBe(true);
    expect(rsa2Verify('a=1&b=中文 ', signature, publicKey)).toBe(false);
    expect(rsa2Verify(content, changeOneByte(signature, 10), publicKey)).toBe(false);
    expect(rsa2Verify(content, 'not base64!', publicKey)).toBe(false);
    expect(rsa2Verify(content, signature, createPublicKey(keys.appPublicKeyPem))).toBe(false);
  });
});

describe('notifications', () => {
  test('when the gateway signs a notification, then the SDK verifies it with sign_type present', () => {
    const fields = fieldsOf(signedForm(notification, alipayKey()));
    expect(fields.sign_type).toBe('RSA2');
    expect(sdk.checkNotifySign(fields)).toBe(true);
    expect(sdk.checkNotifySignV2(fields)).toBe(true);
  });

  test('when the receiver drops sign_type before verifying, then the SDK still verifies it', () => {
    const { sign_type: _signType, ...fields } = fieldsOf(signedForm(notification, alipayKey()));
    expect(sdk.checkNotifySign(fields)).toBe(true);
  });

  test('when one byte of a value or of the signature changes, then the SDK refuses the notification', () => {
    const fields = fieldsOf(signedForm(notification, alipayKey()));
    expect(sdk.checkNotifySign({ ...fields, total_amount: changeOneByte(fields.total_amount!, 0) })).toBe(
      false,
    );
    expect(sdk.checkNotifySign({ ...fields, subject: changeOneByte(fields.subject!, 0) })).toBe(false);
    expect(sdk.checkNotifySign({ ...fields, sign: changeOneByte(fields.sign!, 20) })).toBe(false);
    expect(sdk.checkNotifySign({ ...fields, extra: 'added' })).toBe(false);
  });

  test('when a notification is signed with another key, then the SDK refuses it', () => {
    const fields = fieldsOf(signedForm(notification, createPrivateKey(keys.appPrivateKeyPem)));
    expect(sdk.checkNotifySign(fields)).toBe(false);
  });
});

describe('answers', () => {
  test('when the gateway signs an answer, then the SDK cuts the same text out of the body and verifies it', () => {
    const key = responseKey('alipay.trade.query');
    const body = signedAnswer(
      key,
      success({ trade_no: '1', subject: 'a "quoted" } brace', url: 'http://x/y' }),
      alipayKey(),
    );
    const parsed = JSON.parse(body) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual([key, 'sign']);
    expect(sdk.getSignStr(body, key)).toBe(JSON.stringify(parsed[key]));
    expect(() => sdk.checkResponseSign(body, key, parsed.sign as string, 'trace')).not.toThrow();
  });

  test('when one byte of the answer changes, then the SDK refuses it', () => {
    const key = responseKey('alipay.trade.query');
    const body = signedAnswer(key, success({ total_amount: '88.88' }), alipayKey());
    const sign = (JSON.parse(body) as { sign: string }).sign;
    const tampered = body.replace('88.88', '88.89');
    expect(() => sdk.checkResponseSign(tampered, key, sign, 'trace')).toThrow(/验签失败/);
  });
});

describe('requests', () => {
  /** The SDK's signed parameters for a method, as the gateway decodes them. */
  function sdkRequest(timestamp: string): Params {
    const orderString = sdk.sdkExecute('alipay.trade.app.pay', {
      bizContent: { out_trade_no: 'P1', total_amount: '0.01', subject: '中文 & = +' },
      notify_url: 'http://127.0.0.1:1/notify?x=1&y=2',
      timestamp,
    });
    return Object.fromEntries(new URLSearchParams(orderString));
  }

  test('when the SDK signs a request with a Beijing timestamp, then the gateway accepts it', () => {
    const now = Date.now();
    expect(() => checkCommonParams(sdkRequest(beijingTime(now)), app(), now)).not.toThrow();
  });

  test('when a signed parameter changes, then the gateway refuses it as isv.invalid-signature', () => {
    const now = Date.now();
    const params = sdkRequest(beijingTime(now));
    const err = refusal(() =>
      checkCommonParams({ ...params, biz_content: params.biz_content!.replace('0.01', '0.02') }, app(), now),
    );
    expect(err.body()).toMatchObject({ code: '40002', sub_code: 'isv.invalid-signature' });
  });

  test('when the timestamp is 8 hours behind Beijing time, then it is isv.invalid-timestamp naming the time zone', () => {
    const now = Date.now();
    const err = refusal(() => checkCommonParams(sdkRequest(beijingTime(now - 8 * 3_600_000)), app(), now));
    expect(err.body()).toMatchObject({ code: '40002', sub_code: 'isv.invalid-timestamp' });
    expect(err.subMsg).toMatch(/8 h behind/);
  });

  test('when sign or app_id is missing or the app_id is another, then the documented sub_code answers', () => {
    const now = Date.now();
    const params = sdkRequest(beijingTime(now));
    const { sign: _sign, ...unsigned } = params;
    expect(refusal(() => checkCommonParams(unsigned, app(), now)).body()).toMatchObject({
      code: '40001',
      sub_code: 'isv.missing-signature',
    });
    const { app_id: _appId, ...anonymous } = params;
    expect(refusal(() => checkCommonParams(anonymous, app(), now)).subCode).toBe('isv.missing-app-id');
    expect(
      refusal(() => checkCommonParams({ ...params, app_id: '2021000000000000' }, app(), now)).subCode,
    ).toBe('isv.invalid-app-id');
    expect(refusal(() => checkCommonParams({ ...params, sign_type: 'RSA' }, app(), now)).subCode).toBe(
      'isv.invalid-signature-type',
    );
  });
});

describe('times and amounts', () => {
  test('when a Beijing time is written and read back, then it is the same instant, and an impossible date is refused', () => {
    const at = Date.UTC(2026, 10, 23, 16, 30, 5);
    expect(beijingTime(at)).toBe('2026-11-24 00:30:05');
    expect(parseBeijingTime('2026-11-24 00:30:05')).toBe(at);
    expect(parseBeijingTime('2026-02-30 10:00:00')).toBeUndefined();
    expect(parseBeijingTime('2026-11-24T00:30:05')).toBeUndefined();
    expect(beijingTime(nextBeijingMidnight(at))).toBe('2026-11-25 00:00:00');
  });

  test('when amounts are read, then a Price needs two decimals and a royalty amount takes a number or a string', () => {
    expect(fenOfPrice('0.01')).toBe(1);
    expect(fenOfPrice('100000000.00')).toBe(10_000_000_000);
    expect(fenOfPrice('12.3')).toBeUndefined();
    expect(fenOfPrice('1')).toBeUndefined();
    expect(fenOfPrice('-1.00')).toBeUndefined();
    expect(fenOfNumber(0.1)).toBe(10);
    expect(fenOfNumber(19.99)).toBe(1999);
    expect(fenOfNumber('3')).toBe(300);
    expect(fenOfNumber('0.123')).toBeUndefined();
    expect(fenOfNumber(1e21)).toBeUndefined();
  });
});
