/**
 * WeChat Pay API v3's signatures and encryption, on wechatpay-axios-plugin (STYLE: write a
 * transformer, not a signer). Requests and responses are signed by the library's axios
 * interceptors; what is left here is what a callback and a client credential need: checking
 * `Wechatpay-Signature`, opening an AEAD_AES_256_GCM `resource`, and signing the parameters a
 * JSAPI, mini-program or app payment is started with.
 */
import type { KeyObject } from 'node:crypto';
import { Aes, Formatter, Rsa } from 'wechatpay-axios-plugin';

/** How far a signed timestamp may be from our clock (the v3 rule, as the library's response check). */
export const MAX_CLOCK_SKEW_S = 300;

const GCM_TAG_BYTES = 16;

export type WechatpayKey = KeyObject | string | Buffer;

/** A private key (PKCS#8 or PKCS#1 PEM) as the library wants it. */
export function privateKeyFrom(pem: string | Buffer): KeyObject {
  return Rsa.from(pem, Rsa.KEY_TYPE_PRIVATE) as KeyObject;
}

/** A public key (SPKI PEM, or the public key of an X.509 certificate) as the library wants it. */
export function publicKeyFrom(pem: string | Buffer): KeyObject {
  return Rsa.from(pem, Rsa.KEY_TYPE_PUBLIC) as KeyObject;
}

export interface SignedMessage {
  timestamp: string;
  nonce: string;
  body: string;
  /** Base64 SHA256-with-RSA signature (`Wechatpay-Signature`). */
  signature: string;
}

/**
 * Whether a response or callback was signed by the key it names: SHA256-with-RSA over
 * `timestamp\nnonce\nbody\n`.
 */
export function verifyWechatpaySignature(message: SignedMessage, publicKey: WechatpayKey): boolean {
  try {
    return Rsa.verify(
      Formatter.response(message.timestamp, message.nonce, message.body),
      message.signature,
      publicKey,
    );
  } catch {
    return false;
  }
}

/** An encrypted `resource` of a v3 callback (or of a downloaded platform certificate). */
export interface EncryptedResource {
  algorithm?: string;
  ciphertext: string;
  nonce: string;
  associated_data?: string;
}

/**
 * Opens an AEAD_AES_256_GCM resource with the APIv3 key: base64 ciphertext with its 16-byte tag
 * at the end, a 12-character nonce and the associated data. Throws when the tag does not match.
 */
export function decryptResource(resource: EncryptedResource, apiV3Key: string): string {
  if (resource.algorithm !== undefined && resource.algorithm !== 'AEAD_AES_256_GCM') {
    throw new Error(`unsupported resource algorithm ${resource.algorithm}`);
  }
  // The tag is always 16 bytes; a shorter input would be taken as a short tag over nothing.
  if (Buffer.from(resource.ciphertext, 'base64').length <= GCM_TAG_BYTES) {
    throw new Error('resource ciphertext is shorter than its authentication tag');
  }
  return Aes.AesGcm.decrypt(resource.ciphertext, apiV3Key, resource.nonce, resource.associated_data ?? '');
}

/** The parameters `WeixinJSBridge.invoke('getBrandWCPayRequest')` and `wx.requestPayment` take. */
export interface JsapiPayParams {
  appId: string;
  timeStamp: string;
  nonceStr: string;
  package: string;
  signType: 'RSA';
  paySign: string;
}

/**
 * Signs a JSAPI or mini-program payment: SHA256-with-RSA with the merchant key over
 * `appId\ntimeStamp\nnonceStr\npackage\n`, where package is `prepay_id=…`.
 */
export function jsapiPayParams(
  input: { appId: string; prepayId: string; timeStamp: string; nonceStr: string },
  merchantKey: WechatpayKey,
): JsapiPayParams {
  const pkg = `prepay_id=${input.prepayId}`;
  const message = Formatter.joinedByLineFeed(input.appId, input.timeStamp, input.nonceStr, pkg);
  return {
    appId: input.appId,
    timeStamp: input.timeStamp,
    nonceStr: input.nonceStr,
    package: pkg,
    signType: 'RSA',
    paySign: Rsa.sign(message, merchantKey),
  };
}

/** The parameters the app SDK's `PayReq` takes, signed over `appid\ntimestamp\nnoncestr\nprepayid\n`. */
export interface AppPayParams {
  appid: string;
  partnerid: string;
  prepayid: string;
  package: 'Sign=WXPay';
  noncestr: string;
  timestamp: string;
  sign: string;
}

export function appPayParams(
  input: { appId: string; partnerId: string; prepayId: string; timeStamp: string; nonceStr: string },
  merchantKey: WechatpayKey,
): AppPayParams {
  const message = Formatter.joinedByLineFeed(input.appId, input.timeStamp, input.nonceStr, input.prepayId);
  return {
    appid: input.appId,
    partnerid: input.partnerId,
    prepayid: input.prepayId,
    package: 'Sign=WXPay',
    noncestr: input.nonceStr,
    timestamp: input.timeStamp,
    sign: Rsa.sign(message, merchantKey),
  };
}
