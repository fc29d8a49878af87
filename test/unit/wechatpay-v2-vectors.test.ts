import { Hash } from 'wechatpay-axios-plugin';
import { isV2Body, v2Fields } from '../../src/channels/wechatpay/contracts';
import { WechatpayV2Client } from '../../src/channels/wechatpay/v2-client';
import { buildV2Xml, parseV2Xml, v2Sign, v2SignedString, v2Verifies } from '../../sandbox/wechatpay/wire-v2';

// WeChat Pay API v2's signing example (安全规范 › 签名算法, pay.weixin.qq.com/wiki/doc/api/jsapi.php?
// chapter=4_3): these fields with the key 192006250b4c09247ec02edce69f6a2d sign to the values
// below, MD5 and HMAC-SHA256. They are the published ones, not computed by the code under test.
const EXAMPLE = {
  appid: 'wxd930ea5d5a258f4f',
  mch_id: '10000100',
  device_info: '1000',
  body: 'test',
  nonce_str: 'ibuaiVcKdpRxkhJA',
};
const KEY = '192006250b4c09247ec02edce69f6a2d';
const PUBLISHED_STRING =
  'appid=wxd930ea5d5a258f4f&body=test&device_info=1000&mch_id=10000100&nonce_str=ibuaiVcKdpRxkhJA&key=192006250b4c09247ec02edce69f6a2d';
const PUBLISHED_MD5 = '9A0A8659F005D6984697E2CA0A9CF3B7';
const PUBLISHED_HMAC = '6A9AE1657590FD6257D693A078E1C3E4BB6BA4DC30B23E0EE2496E54170DACD6';

describe('WeChat Pay v2 signing, against the published example', () => {
  it("the offline upstream's string and signs are the published ones", () => {
    expect(v2SignedString(EXAMPLE, KEY)).toBe(PUBLISHED_STRING);
    expect(v2Sign(EXAMPLE, KEY, 'MD5')).toBe(PUBLISHED_MD5);
    expect(v2Sign(EXAMPLE, KEY, 'HMAC-SHA256')).toBe(PUBLISHED_HMAC);
  });

  it("the SDK signs the adapter's calls the same way", () => {
    expect(Hash.sign('MD5', EXAMPLE, KEY)).toBe(PUBLISHED_MD5);
    expect(Hash.sign('HMAC-SHA256', EXAMPLE, KEY)).toBe(PUBLISHED_HMAC);
  });

  it('empty values and the sign itself are left out of what is signed', () => {
    expect(v2Sign({ ...EXAMPLE, attach: '', sign: 'X' }, KEY)).toBe(PUBLISHED_MD5);
  });

  it('a sign verifies with the right key only, and not once a field changes', () => {
    const signed = { ...EXAMPLE, sign: PUBLISHED_MD5 };
    expect(v2Verifies(signed, KEY)).toBe(true);
    expect(v2Verifies({ ...signed, body: 'test2' }, KEY)).toBe(false);
    expect(v2Verifies(signed, KEY.replace('1', '2'))).toBe(false);
    // sign_type is itself a signed field: the published HMAC is of the fields without it.
    expect(v2Verifies({ ...EXAMPLE, sign: PUBLISHED_HMAC }, KEY)).toBe(true);
  });

  it('the adapter verifies what the offline upstream signs, in either algorithm', () => {
    const client = new WechatpayV2Client({
      baseUrl: 'http://127.0.0.1:1',
      spMchid: '10000100',
      apiV2Key: KEY,
      timeoutMs: 1000,
    });
    for (const type of ['MD5', 'HMAC-SHA256'] as const) {
      const xml = buildV2Xml({
        ...EXAMPLE,
        return_code: 'SUCCESS',
        sign: v2Sign({ ...EXAMPLE, return_code: 'SUCCESS' }, KEY, type),
      });
      const fields = v2Fields(Buffer.from(xml), 'test');
      expect(client.verifies(fields)).toBe(true);
      expect(client.verifies({ ...fields, body: 'other' })).toBe(false);
    }
  });
});

describe('v2 XML', () => {
  it('round-trips CDATA, markup-like text and Chinese', () => {
    const fields = { body: '水电代扣 <b>&"\'', contract_id: 'Wx15463511252015071056489715', odd: 'a]]>b' };
    expect(parseV2Xml(buildV2Xml(fields))).toEqual(fields);
  });

  it('reads the published notification shape, with and without CDATA', () => {
    const xml =
      '<xml><mch_id>10000098</mch_id><contract_code><![CDATA[1023658866]]></contract_code><change_type>ADD</change_type></xml>';
    expect(parseV2Xml(xml)).toEqual({ mch_id: '10000098', contract_code: '1023658866', change_type: 'ADD' });
  });

  it('refuses a DOCTYPE and what is not an <xml> body', () => {
    expect(
      parseV2Xml('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><xml><a>&e;</a></xml>'),
    ).toBeUndefined();
    expect(parseV2Xml('{"a":1}')).toBeUndefined();
  });

  it('tells a v2 body from a v3 one by its first character', () => {
    expect(isV2Body(Buffer.from('  <xml></xml>'))).toBe(true);
    expect(isV2Body(Buffer.from('{"id":"x"}'))).toBe(false);
    expect(isV2Body(Buffer.alloc(0))).toBe(false);
  });
});
