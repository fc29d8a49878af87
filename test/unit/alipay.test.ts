/**
 * The Alipay adapter's own parts: exact yuan ↔ fen conversion over the whole amount range, Beijing
 * time, the state mapping, and notification verification against the real signed
 * `trade_status_sync` notification and Alipay public key that alipay-sdk publishes in its tests.
 */
import fc from 'fast-check';
import { AlipayChannel, safeText } from '../../src/channels/alipay';
import {
  ALIPAY_MAX_AMOUNT_FEN,
  beijingTime,
  fenOf,
  notifySays,
  parseBeijingTime,
  paymentStateOf,
  receiverType,
  refundQueryStateOf,
  settleStateOf,
  toWireCreate,
  yuanOf,
  zftStateOf,
} from '../../src/channels/alipay/transformers';
import { ChannelError } from '../../src/channels/errors';
import { generateKeyPairSync } from 'node:crypto';

// alipay/alipay-sdk-nodejs-all test/alipay.test.ts, "verify sign should delete sign_type": a
// notification Alipay signed for app 2019073166072302, and the public key that verifies it.
const VECTOR_PUBLIC_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAqObrdC7hrgAVM98tK0nv3hSQRGGKT4lBsQjHiGjeYZjOPIPHR5knm2jnnz/YGIXIofVHkA/tAlBAd5DrY7YpvI4tP5EONLtZKC2ghBMx7McI2wRD0xiqzxOQr1FuhZGJ8/AUokBzJrzY+aGX2xcOrxFYRlFilvVLTXg4LWjR1tdPkO6+i7wQZAIVMClPkwVRZEbaERRHlKqTzv2gGv5rDU8gRoe1LeaN+6BlbTqHWkQcNCUNrA8C6l17XAXGKDsm/9TFWwO8EPHHHCaQdjtV5/FdcWIt+L8SR1ss7EXTjYDFtxcKVv9rEoY1lX8T4mX+GbXfZHraG5NCF1+XioL5JwIDAQAB';
const VECTOR: Record<string, string> = {
  gmt_create: '2019-08-15 15:56:22',
  charset: 'utf-8',
  seller_email: 'z97-yuquerevenue@service.aliyun.com',
  subject: '语雀空间 500人规模',
  sign: 'QfTb8tqE1BMhS5qAnXtvsF3/jBkEvu9q9en0pdbBUDDjvKycZhQb7h8GDs4FKfi049PynaNuatxSgLb/nLWZpXyyh0LEWdK2S6Ri7nPwrVgOs08zugLO20vOQz44y3ti2Ncm8/wZts1Fr2gZ7pShnVX3d1B50hbsXnObT1r/U8ONNQjWXd0HIul4TG+Q3fm3svmSvFEy0WnzuhcyHPX5Gm4ELNctL6Qd5YniGJFNcc7kopHYtI/XD9YCKCH6Ct02rzUs9i11C9CsadtZn+WhxF26Dqt9sGEFajkJ8cxUTLi8+VCpLHsgPE8P0y095uQcDdK0YjCh4x7wVSov+lrmOQ==',
  buyer_id: '2088102534368455',
  invoice_amount: '0.10',
  notify_id: '2019081500222155624068450559358070',
  // As a form post carries it: the JSON text.
  fund_bill_list: '[{"amount":"0.10","fundChannel":"ALIPAYACCOUNT"}]',
  notify_type: 'trade_status_sync',
  trade_status: 'TRADE_SUCCESS',
  receipt_amount: '0.10',
  buyer_pay_amount: '0.10',
  sign_type: 'RSA2',
  app_id: '2019073166072302',
  seller_id: '2088531891668739',
  gmt_payment: '2019-08-15 15:56:24',
  notify_time: '2019-08-15 15:56:25',
  version: '1.0',
  out_trade_no: '20190815155618536-564-57',
  total_amount: '0.10',
  trade_no: '2019081522001468450512505578',
  auth_app_id: '2019073166072302',
  buyer_logon_id: 'xud***@126.com',
  point_amount: '0.00',
};

const appKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;

function channelFor(publicKeyBase64: string): AlipayChannel {
  return new AlipayChannel({
    gatewayUrl: 'http://127.0.0.1:9/gateway.do',
    appId: '2019073166072302',
    privateKey: appKey,
    alipayPublicKey: `-----BEGIN PUBLIC KEY-----\n${publicKeyBase64}\n-----END PUBLIC KEY-----`,
    timeoutMs: 1_000,
  });
}

const asForm = (params: Record<string, string>) => ({
  rawBody: Buffer.from(new URLSearchParams(params).toString()),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

describe("Alipay's published notification vector", () => {
  const channel = channelFor(VECTOR_PUBLIC_KEY);

  test('when the signed notification arrives as a form, then it verifies, with sign_type and without', () => {
    const { sign_type: _dropped, ...withoutSignType } = VECTOR;
    expect([channel.verifyNotify(asForm(VECTOR)), channel.verifyNotify(asForm(withoutSignType))]).toEqual([
      { ok: true },
      { ok: true },
    ]);
  });

  test.each([
    ['total_amount', '0.11'],
    ['out_trade_no', '20190815155618536-564-58'],
    ['subject', '语雀空间 501人规模'],
  ])('when %s has one byte changed, then it does not verify', (field, value) => {
    expect(channel.verifyNotify(asForm({ ...VECTOR, [field]: value })).ok).toBe(false);
  });

  test('when the sign itself has one byte changed or is missing, then it does not verify', () => {
    const sign = VECTOR.sign!;
    const flipped = `${sign.slice(0, 10)}${sign[10] === 'A' ? 'B' : 'A'}${sign.slice(11)}`;
    const { sign: _sign, ...unsigned } = VECTOR;
    expect([
      channel.verifyNotify(asForm({ ...VECTOR, sign: flipped })).ok,
      channel.verifyNotify(asForm(unsigned)).ok,
    ]).toEqual([false, false]);
  });

  test('when the notification says sign_type RSA (SHA-1) or one unknown, then it does not verify, and nothing throws', () => {
    expect([
      channel.verifyNotify(asForm({ ...VECTOR, sign_type: 'RSA' })).ok,
      channel.verifyNotify(asForm({ ...VECTOR, sign_type: 'MD5' })).ok,
    ]).toEqual([false, false]);
  });

  test('when another key is trusted, then the notification does not verify', () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ type: 'spki', format: 'der' })
      .toString('base64');
    expect(channelFor(other).verifyNotify(asForm(VECTOR)).ok).toBe(false);
  });

  test('when the verified notification is read, then it is the payment of 10 fen at its payment time', () => {
    expect(notifySays(VECTOR)).toEqual({
      kind: 'event',
      event: {
        kind: 'payment',
        eventId: '2019081500222155624068450559358070',
        tradeNo: '20190815155618536-564-57',
        status: 'paid',
        channelTradeNo: '2019081522001468450512505578',
        amount: 10,
        currency: 'CNY',
        paidAt: new Date('2019-08-15T07:56:24.000Z'),
      },
    });
  });
});

describe('yuan and fen', () => {
  test('when any amount in fen up to the ceiling goes to yuan and back, then it is the same amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000_000 }), (fen) => {
        const yuan = yuanOf(fen);
        expect(yuan).toMatch(/^\d+\.\d{2}$/);
        expect(fenOf(yuan)).toBe(fen);
      }),
      { numRuns: 5_000 },
    );
  });

  test('when amounts sit where floating point goes wrong, then the conversion is exact', () => {
    expect([
      yuanOf(1),
      yuanOf(10),
      yuanOf(29),
      yuanOf(57),
      yuanOf(1_005),
      yuanOf(ALIPAY_MAX_AMOUNT_FEN),
    ]).toEqual(['0.01', '0.10', '0.29', '0.57', '10.05', '100000000.00']);
    expect([
      fenOf('0.29'),
      fenOf('1.005'),
      fenOf('12.3'),
      fenOf('12'),
      fenOf('-1.00'),
      fenOf('1e3'),
      fenOf(12),
    ]).toEqual([29, undefined, 1230, 1200, undefined, undefined, undefined]);
  });

  test('when a fraction or a negative amount is given, then it is refused, not rounded', () => {
    expect(() => yuanOf(1.5)).toThrow(RangeError);
    expect(() => yuanOf(-1)).toThrow(RangeError);
  });
});

describe('Beijing time', () => {
  test('when any instant is written and read back, then it is the same second', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800 }), (s) => {
        const at = new Date(s * 1000);
        expect(parseBeijingTime(beijingTime(at))).toEqual(at);
      }),
    );
    expect(beijingTime(new Date('2026-11-23T16:30:00Z'))).toBe('2026-11-24 00:30:00');
  });
});

describe('state mapping', () => {
  test('when a trade is queried in each trade_status, then the order state follows, and a refunded trade stays paid', () => {
    const base = { trade_no: '2026112322001', total_amount: '1.00' };
    expect([
      paymentStateOf({ ...base, trade_status: 'WAIT_BUYER_PAY' }).status,
      paymentStateOf({ ...base, trade_status: 'TRADE_CLOSED' }).status,
      paymentStateOf({ ...base, trade_status: 'TRADE_SUCCESS', send_pay_date: '2026-11-23 10:00:00' }),
      paymentStateOf({ ...base, trade_status: 'TRADE_FINISHED', send_pay_date: '2026-11-23 10:00:00' })
        .status,
      paymentStateOf({ ...base, trade_status: 'TRADE_CLOSED', send_pay_date: '2026-11-23 10:00:00' }).status,
    ]).toEqual([
      'pending',
      'closed',
      {
        status: 'paid',
        channelTradeNo: '2026112322001',
        paidAt: new Date('2026-11-23T02:00:00Z'),
        amount: 100,
      },
      'paid',
      'paid',
    ]);
    expect(() => paymentStateOf({ ...base, trade_status: 'UNKNOWN' })).toThrow(ChannelError);
  });

  test('when a refund is queried, then REFUND_SUCCESS is success, a refund without it is processing, and none is not_found', () => {
    expect([
      refundQueryStateOf({ code: '10000' }).status,
      refundQueryStateOf({ out_request_no: 'R1', refund_amount: '1.00' }).status,
      refundQueryStateOf({ out_request_no: 'R1', refund_amount: '1.00', refund_status: 'REFUND_SUCCESS' })
        .status,
    ]).toEqual(['not_found', 'processing', 'success']);
  });

  test('when a settle has details in each state, then any FAIL fails it and only all SUCCESS finishes it', () => {
    expect([
      settleStateOf({ royalty_detail_list: [{ state: 'SUCCESS' }, { state: 'SUCCESS' }] }).status,
      settleStateOf({ royalty_detail_list: [{ state: 'SUCCESS' }, { state: 'PROCESSING' }] }).status,
      settleStateOf({ royalty_detail_list: [{ state: 'SUCCESS' }, { state: 'FAIL', trans_in: '2088' }] })
        .status,
      settleStateOf({}).status,
    ]).toEqual(['finished', 'processing', 'failed', 'processing']);
  });

  test('when a secondary merchant application is in each status, then it maps onto the onboarding states', () => {
    expect([
      zftStateOf({ order_id: 'o1', status: '031' }).status,
      zftStateOf({ order_id: 'o1', status: '99', smid: '2088000000000001' }),
      zftStateOf({ order_id: 'o1', status: '-1', reason: 'licence unreadable' }).rejectReason,
      zftStateOf({ order_id: 'o1', status: '' }).status,
    ]).toMatchObject([
      'auditing',
      { status: 'finished', subMerchantNo: '2088000000000001', channelApplicationNo: 'o1' },
      'licence unreadable',
      'submitted',
    ]);
    expect(() => zftStateOf({ order_id: 'o1', status: '99' })).toThrow(ChannelError);
  });

  test('when receivers are named, then a 2088 PID is a userId, other accounts a loginName, and an unknown type is refused', () => {
    expect([
      receiverType('merchant', '2088000000000001'),
      receiverType('personal', 'buyer@example.com'),
      receiverType('open_id', '074a1CcTG1LelxKe4x'),
    ]).toEqual(['userId', 'loginName', 'openId']);
    expect(() => receiverType('constructor', '2088000000000001')).toThrow(ChannelError);
  });

  test('when a jsapi trade has no buyer in extra, then it is refused before it travels', () => {
    const input = {
      tradeNo: 'T1',
      amount: 100,
      payMethod: 'jsapi' as const,
      subject: 's',
      expireAt: new Date('2026-11-23T16:30:00Z'),
      callbackUrl: 'http://x',
      profitSharing: false,
    };
    expect(() => toWireCreate(input, undefined)).toThrow(/extra.buyer_id or extra.buyer_open_id/);
    expect(
      toWireCreate({ ...input, extra: { buyer_id: '2088000000000002' } }, '2088000000000003'),
    ).toMatchObject({
      out_trade_no: 'T1',
      total_amount: '1.00',
      time_expire: '2026-11-24 00:30:00',
      product_code: 'JSAPI_PAY',
      buyer_id: '2088000000000002',
      sub_merchant: { merchant_id: '2088000000000003' },
    });
  });
});

describe("Alipay's words in durapay's messages", () => {
  test('when Alipay quotes a signed string or numbers, then the message is cut before it and the numbers are masked', () => {
    expect(safeText('验签出错，验签字符串为：app_id=2021&biz_content={"cert_no":"11010519491231002X"}')).toBe(
      '验签出错，',
    );
    expect(safeText('证件号 11010519491231002X 与姓名不符，手机 13800138000')).toBe(
      '证件号 11…02X 与姓名不符，手机 13…00',
    );
    expect(safeText('x'.repeat(500))).toHaveLength(120);
  });
});
