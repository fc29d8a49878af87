import { createDecipheriv, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Aes } from 'wechatpay-axios-plugin';
import {
  appPayParams,
  decryptResource,
  jsapiPayParams,
  privateKeyFrom,
  publicKeyFrom,
  verifyWechatpaySignature,
  type EncryptedResource,
  type SignedMessage,
} from '../../src/channels/wechatpay/signature';

// Published and independently computed vectors for the WeChat Pay API v3 primitives. Every expected
// value here comes from a published source, the openssl CLI or a one-off node:crypto run, never from
// the code under test.

/** The base64 string with the low bit of byte `index` flipped. */
function flipByte(base64: string, index: number): string {
  const bytes = Buffer.from(base64, 'base64');
  bytes.writeUInt8(bytes.readUInt8(index) ^ 0x01, index);
  return bytes.toString('base64');
}

// ---------------------------------------------------------------------------------------------------
// 1. AEAD_AES_256_GCM against published AES-256-GCM vectors (96-bit IV).
// ---------------------------------------------------------------------------------------------------

interface GcmVector {
  source: string;
  key: string;
  iv: string;
  aad: string;
  plaintext: string;
  /** ciphertext || 16-byte tag, hex: the layout of a v3 `resource.ciphertext` once base64-decoded. */
  sealed: string;
}

const GCM_VECTORS: GcmVector[] = [
  {
    // McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)" (gcm-spec.pdf, 2005),
    // Appendix B, Test Case 16: 256-bit key, 96-bit IV, 20-byte AAD, 60-byte plaintext.
    source: 'McGrew-Viega GCM spec, Test Case 16',
    key: 'feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308',
    iv: 'cafebabefacedbaddecaf888',
    aad: 'feedfacedeadbeeffeedfacedeadbeefabaddad2',
    plaintext:
      'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72' +
      '1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39',
    sealed:
      // C
      '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa' +
      '8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662' +
      // T
      '76fc6ece0f4e1768cddf8853bb2d551b',
  },
  {
    // golang/go, src/crypto/cipher/gcm_test.go (commit 036a075d36363774a95f6000b7c4098896474744),
    // aesGCMTests, the AES-256 entry (key 5394e890…, nonce 815e840b…, 39-byte AD); Go's "result"
    // is ciphertext||tag, as here.
    source: 'golang/go src/crypto/cipher/gcm_test.go, aesGCMTests AES-256 entry',
    key: '5394e890d37ba55ec9d5f327f15680f6a63ef5279c79331643ad0af6d2623525',
    iv: '815e840b7aca7af3b324583f',
    aad: '0feccdfae8ed65fa31a0858a1c466f79e8aa658c2f3ba93c3f92158b4e30955e1c62580450beff',
    plaintext:
      '8e63067cd15359f796b43c68f093f55fdf3589fc5f2fdfad5f9d156668a617f7091d73da71cdd207810e6f71a165d0809a' +
      '597df9885ca6e8f9bb4e616166586b83cc45f49917fc1a256b8bc7d05c476ab5c4633e20092619c4747b26dad3915e9fd6' +
      '5238ee4e5213badeda8a3a22f5efe6582d0762532026c89b4ca26fdd000eb45347a2a199b55b7790e6b1b2dba19833ce9f' +
      '9522c0bcea5b088ccae68dd99ae0203c81b9f1dd3181c3e2339e83ccd1526b67742b235e872bea5111772aab574ae7d904' +
      'd9b6355a79178e179b5ae8edc54f61f172bf789ea9c9af21f45b783e4251421b077776808f04972a5e801723cf78144237' +
      '8ce0e0568f014aea7a882dcbcb48d342be53d1c2ebfb206b12443a8a587cc1e55ca23beca385d61d0d03e9d84cbc1b0a',
    sealed:
      'b69a7e17bb5af688883274550a4ded0d1aff49a0b18343f4b382f745c163f7f714c9206a32a1ff012427e19431951edd0a' +
      '755e5f491b0eedfd7df68bbc6085dd2888607a2f998c3e881eb1694109250db28291e71f4ad344a125624fb92e16ea9815' +
      '047cd1111cabfdc9cb8c3b4b0f40aa91d31774009781231400789ed545404af6c3f76d07ddc984a7bd8f52728159782832' +
      'e298cc4d529be96d17be898efd83e44dc7b0e2efc645849fd2bba61fef0ae7be0dcab233cc4e2b7ba4e887de9c64b97f2a' +
      '1818aa54371a8d629dae37975f7784e5e3cc77055ed6e975b1e5f55e6bbacdc9f295ce4ada2c16113cd5b323cf78b7dde3' +
      '9f4a87aa8c141a31174e3584ccbd380cf5ec6d1dba539928b084fa9683e9c0953acf47cc3ac384a2c38914f1da01fb2cfd' +
      '78905c2b58d36b2574b9df15535d82',
  },
];

// decryptResource takes the APIv3 key and nonce as strings, which node:crypto turns into their UTF-8
// bytes (as WeChat intends: a 32-character key, a 12-character nonce). The published keys, IVs and AADs
// above contain bytes (0xfe, 0xca, …) that are not valid UTF-8, so no string reaches them. These
// vectors therefore go through the function decryptResource delegates to, Aes.AesGcm.decrypt of
// wechatpay-axios-plugin, which hands key and iv straight to createDecipheriv and so accepts Buffers
// (typed CipherKey / BinaryLike). Its `aad` is typed string but is read with Buffer.from(aad), which
// copies a Buffer byte for byte: hence the cast. Its result is the plaintext decoded as UTF-8, lossy
// for these binary plaintexts, so it is compared with the published bytes decoded the same way; that
// decrypt does not throw is what proves, through the GCM tag, that every byte was recovered.
function openWithLibrary(v: GcmVector, overrides: { sealed?: string; aad?: Buffer } = {}): string {
  return Aes.AesGcm.decrypt(
    overrides.sealed ?? Buffer.from(v.sealed, 'hex').toString('base64'),
    Buffer.from(v.key, 'hex'),
    Buffer.from(v.iv, 'hex'),
    (overrides.aad ?? Buffer.from(v.aad, 'hex')) as unknown as string,
  );
}

describe('AEAD_AES_256_GCM (published vectors)', () => {
  test.each(GCM_VECTORS)(
    'when $source is opened with its key, IV and AAD as bytes, then its plaintext comes back',
    (v) => {
      expect(openWithLibrary(v)).toBe(Buffer.from(v.plaintext, 'hex').toString('utf8'));
    },
  );

  test.each(GCM_VECTORS)('when one ciphertext byte of $source is flipped, then decryption throws', (v) => {
    const sealed = Buffer.from(v.sealed, 'hex').toString('base64');
    expect(() => openWithLibrary(v, { sealed: flipByte(sealed, 0) })).toThrow();
    // The last byte is the tag's.
    expect(() => openWithLibrary(v, { sealed: flipByte(sealed, v.sealed.length / 2 - 1) })).toThrow();
  });

  test.each(GCM_VECTORS)('when the AAD of $source is altered or dropped, then decryption throws', (v) => {
    const aad = Buffer.from(v.aad, 'hex');
    aad.writeUInt8(aad.readUInt8(0) ^ 0x80, 0);
    expect(() => openWithLibrary(v, { aad })).toThrow();
    expect(() => openWithLibrary(v, { aad: Buffer.alloc(0) })).toThrow();
  });

  // McGrew & Viega, gcm-spec.pdf Appendix B, Test Case 14: K = 0^256, IV = 0^96, P = 0^128, no AAD,
  // C = cea7403d4d606b6e074ec5d3baf39d18, T = d0d1c8a799996bf0265b98b5d48ab919. All-zero bytes are
  // valid UTF-8 (NUL characters), so this published vector does go through decryptResource itself.
  test('when Test Case 14 (all-zero key and IV) is passed to decryptResource as strings, then its zero plaintext comes back', () => {
    const resource: EncryptedResource = {
      algorithm: 'AEAD_AES_256_GCM',
      ciphertext: Buffer.from(
        'cea7403d4d606b6e074ec5d3baf39d18' + 'd0d1c8a799996bf0265b98b5d48ab919',
        'hex',
      ).toString('base64'),
      nonce: '\0'.repeat(12),
      associated_data: '',
    };
    expect(decryptResource(resource, '\0'.repeat(32))).toBe('\0'.repeat(16));
    expect(() => decryptResource({ ...resource, associated_data: 'x' }, '\0'.repeat(32))).toThrow();
    expect(() =>
      decryptResource({ ...resource, ciphertext: flipByte(resource.ciphertext, 3) }, '\0'.repeat(32)),
    ).toThrow();
  });
});

// ---------------------------------------------------------------------------------------------------
// 2. A golden v3 notification resource of our own, sealed once outside the code under test.
// ---------------------------------------------------------------------------------------------------

const GOLDEN_API_V3_KEY = 'durapayTestApiV3Key0123456789abc'; // 32 ASCII characters
const GOLDEN_NONCE = 'fJ2kQ8mZ0xLp'; // 12 characters
const GOLDEN_TRANSACTION =
  '{"mchid":"1900000109","appid":"wx8888888888888888","out_trade_no":"dp_order_000042",' +
  '"transaction_id":"4200000000202401011234567890","trade_type":"JSAPI","trade_state":"SUCCESS",' +
  '"trade_state_desc":"支付成功","bank_type":"CMC","success_time":"2024-01-01T12:00:00+08:00",' +
  '"payer":{"openid":"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"},' +
  '"amount":{"total":100,"payer_total":100,"currency":"CNY","payer_currency":"CNY"}}';
// Sealed once with a standalone node:crypto run (openssl enc refuses AEAD ciphers):
//   createCipheriv('aes-256-gcm', Buffer.from(KEY), Buffer.from(NONCE)).setAAD(Buffer.from('transaction'))
//   → base64(update(GOLDEN_TRANSACTION) || final() || getAuthTag())
// Its ciphertext part (all but the last 16 bytes) was cross-checked with the openssl CLI, since GCM
// encrypts as CTR from counter block nonce||00000002:
//   openssl enc -aes-256-ctr -K <hex of KEY> -iv <hex of NONCE>00000002
const GOLDEN_CIPHERTEXT =
  'TmErPNJ47UW7Hn+C/Og6jjoNycTELuSf4Km+XxdSBTTaMk/wrMlbwQv+fRCkX6pvXzsc9sRwhUaqRe7tTFMgNmEnx/QX2N2GAQmprZV1' +
  'SA19N7Rk8YwVoggJa1qi+BiPxYrbo1LLayQlEY59DFP4h4GeGBMMQioJHlYDwi5SDKkcosg2j16FNCb8yDL9EBb08WdcLFF47arZsHk9' +
  'XdfYIf4n1uKtEzehxxJHfD1vdY3c1lS5LYyKN0swMC0qWFR7gSY+vgaWHnOXyOGmHKZ3RoEsD/m+bGTh8MqwFRdNVv5DTTGhlag6AkyyI' +
  'Ws0NEeoI9Wda3ezvxv5JXILuGgYClE3FfISLSY8+0r6A9Ihm05h4Lh+WP0irtYCfjXLqWBDw67xv3Vz3qxq5Q6JNggG72k3lrSCeWX0at' +
  '42wNrFu5n/LgdIVchFEYEUEYs82YGyTrlzaXTjZTbIq8uA/Nylpf7M8348dZXZHsHIMl96r77bcDMUhnKdHttdjquDX/T3UKQur87kJRE' +
  'QKH/HLLDELEqMhEkM8MVscnTilTMklRTHr+U=';

const GOLDEN_RESOURCE: EncryptedResource = {
  algorithm: 'AEAD_AES_256_GCM',
  ciphertext: GOLDEN_CIPHERTEXT,
  nonce: GOLDEN_NONCE,
  associated_data: 'transaction',
};

describe('decryptResource (golden notification)', () => {
  test('when the golden transaction resource is opened with its APIv3 key, then the exact JSON comes back', () => {
    expect(decryptResource(GOLDEN_RESOURCE, GOLDEN_API_V3_KEY)).toBe(GOLDEN_TRANSACTION);
  });

  test('when a ciphertext byte, the tag, the associated data, the nonce or the key is wrong, then it throws', () => {
    const tagByte = Buffer.from(GOLDEN_CIPHERTEXT, 'base64').length - 1;
    const wrong: [EncryptedResource, string][] = [
      [{ ...GOLDEN_RESOURCE, ciphertext: flipByte(GOLDEN_CIPHERTEXT, 10) }, GOLDEN_API_V3_KEY],
      [{ ...GOLDEN_RESOURCE, ciphertext: flipByte(GOLDEN_CIPHERTEXT, tagByte) }, GOLDEN_API_V3_KEY],
      [{ ...GOLDEN_RESOURCE, associated_data: 'refund' }, GOLDEN_API_V3_KEY],
      [{ ...GOLDEN_RESOURCE, associated_data: undefined }, GOLDEN_API_V3_KEY],
      [{ ...GOLDEN_RESOURCE, nonce: 'fJ2kQ8mZ0xLq' }, GOLDEN_API_V3_KEY],
      [GOLDEN_RESOURCE, 'durapayTestApiV3Key0123456789abd'],
    ];
    for (const [resource, key] of wrong) {
      expect(() => decryptResource(resource, key)).toThrow();
    }
  });

  test('when the ciphertext is cut to 4, 8 or 16 bytes, then it throws instead of taking them as a short tag over nothing', () => {
    const whole = Buffer.from(GOLDEN_CIPHERTEXT, 'base64');
    for (const n of [4, 8, 16]) {
      const ciphertext = whole.subarray(whole.length - n).toString('base64');
      expect(() => decryptResource({ ...GOLDEN_RESOURCE, ciphertext }, GOLDEN_API_V3_KEY)).toThrow(
        /shorter than its authentication tag/,
      );
    }
  });

  test('when the resource names another algorithm, then it throws before decrypting', () => {
    expect(() =>
      decryptResource({ ...GOLDEN_RESOURCE, algorithm: 'AEAD_SM4_GCM' }, GOLDEN_API_V3_KEY),
    ).toThrow(/unsupported resource algorithm AEAD_SM4_GCM/);
  });
});

// ---------------------------------------------------------------------------------------------------
// 3. wechatpay-go's published notify vector.
// ---------------------------------------------------------------------------------------------------

// Test data (no code) from wechatpay-apiv3/wechatpay-go, core/notify/notify_test.go
// (commit 10b581e92a93933b822603bd502dbe1bd521f9fd), TestHandler_ParseNotifyRequest: the platform
// certificate, the Wechatpay-* headers and the body; the Go test pins time.Now to the timestamp.
const GO_PLATFORM_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIDVzCCAj+gAwIBAgIJANfOWdH1ItcBMA0GCSqGSIb3DQEBCwUAMEIxCzAJBgNV
BAYTAlhYMRUwEwYDVQQHDAxEZWZhdWx0IENpdHkxHDAaBgNVBAoME0RlZmF1bHQg
Q29tcGFueSBMdGQwHhcNMjEwNDI3MDg1NTIzWhcNMzEwNDI1MDg1NTIzWjBCMQsw
CQYDVQQGEwJYWDEVMBMGA1UEBwwMRGVmYXVsdCBDaXR5MRwwGgYDVQQKDBNEZWZh
dWx0IENvbXBhbnkgTHRkMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA
2VCTd91fnUn73Xy9DLvt/V62TVxRTEEstVdeRaZ3B3leO0pldE806mXO4RwdHXag
HQ4vGeZN0yqm++rDsGK+U3AH7kejyD2pXshNP9Cq5YwbptiLGtjcquw4HNxJQUOm
DeJf2vg6byms9RUipiq4SzbJKqJFlUpbuIPDpSpWz10PYmyCNeDGUUK65E5h2B83
4uxl1zNLYQCrkdBzb8oUxwYeP5a2DNxmjL5lsJML7DGr5znsevnoqGRwTm9fxCGf
y8wus7hwKz6clt3Whmmda7UAdb1c08hEQFVRbF14AR73xbnd8N0obCWJPCbzMCtk
aSef4FdEEgEXJiw0VAJT8wIDAQABo1AwTjAdBgNVHQ4EFgQUT1c7nd/SUO76HSoZ
umNUJv1R5PwwHwYDVR0jBBgwFoAUT1c7nd/SUO76HSoZumNUJv1R5PwwDAYDVR0T
BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEAfTjxKRQMzNB/U6ZoCUS+BSNfa2Oh
0plMN6ZuzwiVVZwg1jywvv5yv04koS7Pd4i9E4gt9ZBUQXlpq+A3oOCEEHNRR6b2
kyazGRM7s0OP5X21WrbpSmKmU6K7hkfx30yYs08LVs/Q8DIhvaj1FCFeJzUCzYn/
fHMq4tsbKO0dKAeydPM/nrUZBmaYQVKMVOORGLFjFKVO7JV6Kq/R86ouhjEPgJOe
2xulNBUcjicqtZlBdEh/PWCYP2SpGVDclKm8jeo175T3EVAkdKzzmfpxtMmnMlmq
cTJOU9TxuGvNASMtjj7pYIerTx+xgZDXEVBWFW9PjJ0TV06tCRsgSHItgg==
-----END CERTIFICATE-----`;
const GO_SERIAL = 'D7CE59D1F522D701';
const GO_API_V3_KEY = 'testMchAPIv3Key0';
const GO_RESOURCE_CIPHERTEXT =
  'YDS3lKPaC4Y52Gf3uhft5qUBlIa8b428AWTtTauHQfQrRw+X1WpiuHIDy0vo1Vd6VEq67aVyqPdDYMkRVSDaZL3iZt' +
  'tevRMOoPKMifozg6XPWjIZumks/GpT48lI4NizyeaqLBokNebthah3o1H76qSlO9NkDjp9bzmKLEYYH9TEklFUpsvPqOTOcgSLgh21YJXYR' +
  '7dEBXFgRLiNIKRgO5JdXh1hccRUAlyVWxE54PXpnQ==';
const GO_NOTIFICATION: SignedMessage = {
  timestamp: '1624523846',
  nonce: 'EcZ9Cmy4Xyx1i6RlJQzLcCyEqDa26NBz',
  body:
    '{"id":"3119dfba-e649-5eec-ab1e-3412bc4d2e17","create_time":"2021-06-24T16:37:26+08:00",' +
    '"resource_type":"encrypt-resource","event_type":"PAYSCORE.USER_OPEN_SERVICE","summary":"签约成功",' +
    '"resource":{"original_type":"payscore","algorithm":"AEAD_AES_256_GCM",' +
    `"ciphertext":"${GO_RESOURCE_CIPHERTEXT}","associated_data":"payscore","nonce":"Kj7QIyUiYx1q"}}`,
  signature:
    'tJHIiIS9eB2hAYstmAmbbD3ZE5LiIm/Ug5tuL4fC0YOFRWIHV39UFIZXC0e9Wl6lBu6sKvkqDkzpqzBsVHyXF' +
    'lbYZTOQrVdG4b6LfTnK4mikv9++ixJMd3vTf2yCqvBkh98zs3Ds5zsYQakzbcwhmw4fMJs4nPLws28H0UW9FjDR//rxELLwXvV1VEA1I' +
    'BLX70xptjL8hrfUjEE8kkry6yNJTHZRU8CAc7qHli2Ng1V1qb9ARbK8A3ThmFmPQvRGrapI/jS2laKKgYUmfdEdkNO6B2Cke5e8VTxY4' +
    '06ArAmQ90GAihDwIcb16TQMnzCMBoutnwZKNiKRACrFmtxw2Q==',
};
// The plaintext the Go test asserts (its `data` constant).
const GO_RESOURCE_PLAINTEXT =
  '{"mchid":"1234567890","appid":"054aa7d7a2a54ab5898df65bd96f001c",' +
  '"create_time":"2020-06-30T12:12:00+08:00","out_contract_code":"21640bdbd08e473e828f3206a2741c6e"}';

describe('verifyWechatpaySignature (wechatpay-go notify vector)', () => {
  const platformKey = publicKeyFrom(GO_PLATFORM_CERTIFICATE);

  test('when the Go notification is checked with its platform certificate, then it is accepted', () => {
    // The header's serial names this certificate (checked with node:crypto, not the code under test).
    expect(new X509Certificate(GO_PLATFORM_CERTIFICATE).serialNumber).toBe(GO_SERIAL);
    expect(verifyWechatpaySignature(GO_NOTIFICATION, platformKey)).toBe(true);
    expect(verifyWechatpaySignature(GO_NOTIFICATION, GO_PLATFORM_CERTIFICATE)).toBe(true);
  });

  test('when one byte of the body, the timestamp, the nonce or the signature changes, then it is rejected', () => {
    const body = Buffer.from(GO_NOTIFICATION.body, 'utf8');
    body.writeUInt8(body.readUInt8(7) ^ 0x01, 7); // inside the id
    const tampered: SignedMessage[] = [
      { ...GO_NOTIFICATION, body: body.toString('utf8') },
      { ...GO_NOTIFICATION, body: GO_NOTIFICATION.body.replace('签约成功', '签约失败') },
      { ...GO_NOTIFICATION, body: `${GO_NOTIFICATION.body}\n` },
      { ...GO_NOTIFICATION, timestamp: '1624523847' },
      { ...GO_NOTIFICATION, nonce: 'EcZ9Cmy4Xyx1i6RlJQzLcCyEqDa26NBZ' },
      { ...GO_NOTIFICATION, signature: flipByte(GO_NOTIFICATION.signature, 100) },
      { ...GO_NOTIFICATION, signature: 'not base64 at all!' },
    ];
    for (const message of tampered) {
      expect(verifyWechatpaySignature(message, platformKey)).toBe(false);
    }
  });

  test('when the Go notification is checked with another RSA key, then it is rejected', () => {
    expect(verifyWechatpaySignature(GO_NOTIFICATION, publicKeyFrom(merchantKeyPem()))).toBe(false);
  });

  // The Go test's APIv3 key is 16 characters, so Go's aes.NewCipher silently runs AES-128-GCM over a
  // resource labelled AEAD_AES_256_GCM. A real APIv3 key is 32 characters; decryptResource is strictly
  // AES-256 and refuses the short key rather than switching cipher.
  test('when the Go resource is opened with its 16-character test key, then decryptResource refuses the key length', () => {
    const resource: EncryptedResource = {
      algorithm: 'AEAD_AES_256_GCM',
      ciphertext: GO_RESOURCE_CIPHERTEXT,
      nonce: 'Kj7QIyUiYx1q',
      associated_data: 'payscore',
    };
    expect(() => decryptResource(resource, GO_API_V3_KEY)).toThrow(/key length/i);
    // Transcription check of the vector itself (node:crypto, AES-128 as Go runs it): the resource
    // copied above does open to the plaintext the Go test expects.
    const sealed = Buffer.from(GO_RESOURCE_CIPHERTEXT, 'base64');
    const decipher = createDecipheriv('aes-128-gcm', Buffer.from(GO_API_V3_KEY), Buffer.from('Kj7QIyUiYx1q'));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    decipher.setAAD(Buffer.from('payscore'));
    const plaintext = Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - 16)),
      decipher.final(),
    ]);
    expect(plaintext.toString('utf8')).toBe(GO_RESOURCE_PLAINTEXT);
  });
});

// ---------------------------------------------------------------------------------------------------
// 4. JSAPI / mini-program paySign and app sign with a fixed test-only merchant key.
// ---------------------------------------------------------------------------------------------------

function merchantKeyPem(): string {
  // TEST-ONLY RSA-2048 key, generated once with `openssl genpkey -algorithm RSA -pkeyopt
  // rsa_keygen_bits:2048`; it signs nothing outside this file.
  return readFileSync(join(__dirname, '../fixtures/wechatpay/merchant-test-key.pem'), 'utf8');
}

const PAY_INPUT = {
  appId: 'wx8888888888888888',
  timeStamp: '1414561699',
  nonceStr: '5K8264ILTKCH16CQ2502SI8ZNMTM67VS',
  prepayId: 'wx201410272009395522657a690389285100',
};
// printf 'wx8888888888888888\n1414561699\n5K8264ILTKCH16CQ2502SI8ZNMTM67VS\nprepay_id=wx201410272009395522657a690389285100\n' \
//   | openssl dgst -sha256 -sign test/fixtures/wechatpay/merchant-test-key.pem | base64 -w0
const OPENSSL_JSAPI_PAY_SIGN =
  'MD9K4GWABziQgHGetpR3R2oqK+5KJSmRAQ+HWJhB4fwvnfxiJBqQXt1/kfuBLOw9+iLQcc5gEGW1d1mmMbKIp/5WOJvmIwkuDj0Awg' +
  'lOmMuYj7+afsjHNlYKVu6npuiEcRiU56EViMmU6YkQpBUH5Yk1TvG2SGeVJiQN1Wc47kMNvVKYwVGQ1fBb0Zho4at/FxXGXLZZCtODCe' +
  'ijW8SIny7NTrjMHt16uVpgJpvzt0xxLcmTaGjnpi4JNmV8TJQxA2xx18gywxoQXaynZxi0Z3pP+9PQBkEO8LwunzLJCi1Kp1HlNvoRkX' +
  'OhqcK0KqJ6ruPxLW6kZ0YArKfiKslkOg==';
// printf 'wx8888888888888888\n1414561699\n5K8264ILTKCH16CQ2502SI8ZNMTM67VS\nwx201410272009395522657a690389285100\n' \
//   | openssl dgst -sha256 -sign test/fixtures/wechatpay/merchant-test-key.pem | base64 -w0
const OPENSSL_APP_SIGN =
  'D9Z/sw30+ea2/ALy0zGDCEo9weUIAa0eyJgRwdyCL91dgp3Xtp9rmfkbDlCt0+vrIl9fqil3gnMDj53fSSk0C8tYwLD7W2l6gtp4TZ' +
  'rcFgdPao90TR1p8dkAHO76+fac74dIjWsG5oDXXVNWeNsGVcndb1Rsr1LFxEYHdKZbL31HwUloR0qhqJiggDAygzt97PQSTEACYNEO96' +
  'NaVWhwCkZ3OhB9U2L+pTG55RrctpOzfdsK+ZNz59ytW9YxnNu4sn1D/nbnIt7TLbcaeHwMosJAPyFkFnr8rOk8//PgO+/2p+1+DquWRW' +
  'lWlQC8AnF8W8gwx0RHJov3HKZU9Vm7lA==';

describe('payment parameters (RSA, openssl-computed signatures)', () => {
  test('when a JSAPI payment is signed with the test merchant key, then paySign is what openssl computes over appId\\ntimeStamp\\nnonceStr\\npackage\\n', () => {
    expect(jsapiPayParams(PAY_INPUT, privateKeyFrom(merchantKeyPem()))).toEqual({
      appId: 'wx8888888888888888',
      timeStamp: '1414561699',
      nonceStr: '5K8264ILTKCH16CQ2502SI8ZNMTM67VS',
      package: 'prepay_id=wx201410272009395522657a690389285100',
      signType: 'RSA',
      paySign: OPENSSL_JSAPI_PAY_SIGN,
    });
    // The PEM itself is accepted as the key too (PKCS#1 v1.5 signatures are deterministic).
    expect(jsapiPayParams(PAY_INPUT, merchantKeyPem()).paySign).toBe(OPENSSL_JSAPI_PAY_SIGN);
  });

  test('when an app payment is signed with the test merchant key, then sign is what openssl computes over appid\\ntimestamp\\nnoncestr\\nprepayid\\n', () => {
    expect(appPayParams({ ...PAY_INPUT, partnerId: '1900000109' }, privateKeyFrom(merchantKeyPem()))).toEqual(
      {
        appid: 'wx8888888888888888',
        partnerid: '1900000109',
        prepayid: 'wx201410272009395522657a690389285100',
        package: 'Sign=WXPay',
        noncestr: '5K8264ILTKCH16CQ2502SI8ZNMTM67VS',
        timestamp: '1414561699',
        sign: OPENSSL_APP_SIGN,
      },
    );
  });

  test('when any signed field differs, then the signature differs from the openssl one', () => {
    const key = privateKeyFrom(merchantKeyPem());
    expect(
      jsapiPayParams({ ...PAY_INPUT, nonceStr: '5K8264ILTKCH16CQ2502SI8ZNMTM67VT' }, key).paySign,
    ).not.toBe(OPENSSL_JSAPI_PAY_SIGN);
    expect(jsapiPayParams({ ...PAY_INPUT, timeStamp: '1414561698' }, key).paySign).not.toBe(
      OPENSSL_JSAPI_PAY_SIGN,
    );
    expect(appPayParams({ ...PAY_INPUT, partnerId: 'x', prepayId: 'wx2' }, key).sign).not.toBe(
      OPENSSL_APP_SIGN,
    );
  });
});
