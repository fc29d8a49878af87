/**
 * A TRANSACTION.SUCCESS callback as WeChat Pay sends it, written here by hand from the v3
 * documentation (AEAD_AES_256_GCM resource, SHA256-with-RSA over timestamp, nonce and body), so
 * that a test can forge one in any detail: the signer, the serial it names, the amount.
 */
import { createCipheriv, createSign, randomUUID } from 'node:crypto';
import type { TestStack } from './harness';

export interface TransactionNotification {
  tradeNo: string;
  subMchid: string;
  /** Fen; 100 unless given. */
  amount?: number;
  /** PEM of the private key that signs it. */
  signer: string;
  /** The Wechatpay-Serial it names; the sandbox's public key id unless given. */
  serial?: string;
}

/** Posts the callback to the stack's WeChat Pay callback endpoint. */
export function postTransactionNotification(stack: TestStack, n: TransactionNotification): Promise<Response> {
  const keys = stack.wechatpay!.keys;
  const amount = n.amount ?? 100;
  const transaction = JSON.stringify({
    sp_appid: keys.spAppid,
    sp_mchid: keys.spMchid,
    sub_mchid: n.subMchid,
    out_trade_no: n.tradeNo,
    transaction_id: `42000000002026112${String(Date.now()).slice(-11)}`,
    trade_type: 'NATIVE',
    trade_state: 'SUCCESS',
    trade_state_desc: '支付成功',
    success_time: '2026-11-23T10:00:00+08:00',
    amount: { total: amount, payer_total: amount, currency: 'CNY', payer_currency: 'CNY' },
  });
  const iv = 'abcdefghijkl';
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keys.apiV3Key), Buffer.from(iv));
  cipher.setAAD(Buffer.from('transaction'));
  const ciphertext = Buffer.concat([cipher.update(transaction, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const body = JSON.stringify({
    id: randomUUID(),
    create_time: '2026-11-23T10:00:00+08:00',
    resource_type: 'encrypt-resource',
    event_type: 'TRANSACTION.SUCCESS',
    summary: '支付成功',
    resource: {
      original_type: 'transaction',
      algorithm: 'AEAD_AES_256_GCM',
      ciphertext: ciphertext.toString('base64'),
      nonce: iv,
      associated_data: 'transaction',
    },
  });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID().replaceAll('-', '');
  const signature = createSign('RSA-SHA256')
    .update(`${timestamp}\n${nonce}\n${body}\n`)
    .sign(n.signer, 'base64');
  return fetch(`${stack.baseUrl}/api/v1/notify/payment/wechatpay`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'wechatpay-serial': n.serial ?? keys.platformPublicKeyId,
      'wechatpay-timestamp': timestamp,
      'wechatpay-nonce': nonce,
      'wechatpay-signature': signature,
    },
    body,
  });
}
