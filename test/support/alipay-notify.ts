/**
 * A `trade_status_sync` notification as Alipay posts it, signed here with node:crypto (RSA2 over
 * the sorted fields without sign and sign_type): with the gateway's key it is genuine, with any
 * other it is a forgery only the signature check can catch.
 */
import { createSign, randomBytes } from 'node:crypto';
import type { TestStack } from './harness';

export interface NotifyFields {
  tradeNo: string;
  totalAmount?: string;
  appId?: string;
  tradeStatus?: string;
}

export function signedNotifyForm(stack: TestStack, fields: NotifyFields, signerPem: string): string {
  const keys = stack.alipay!.keys;
  const params: Record<string, string> = {
    notify_time: '2026-11-23 10:00:01',
    notify_type: 'trade_status_sync',
    notify_id: randomBytes(16).toString('hex'),
    app_id: fields.appId ?? keys.appId,
    charset: 'utf-8',
    version: '1.0',
    trade_no: `2026112322001${randomBytes(6).toString('hex')}`,
    out_trade_no: fields.tradeNo,
    seller_id: keys.sellerId,
    buyer_id: '2088102177846880',
    trade_status: fields.tradeStatus ?? 'TRADE_SUCCESS',
    total_amount: fields.totalAmount ?? '1.00',
    receipt_amount: fields.totalAmount ?? '1.00',
    subject: 'Green tea',
    gmt_create: '2026-11-23 09:59:00',
    gmt_payment: '2026-11-23 10:00:00',
  };
  const content = Object.keys(params)
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  const sign = createSign('RSA-SHA256').update(content, 'utf8').sign(signerPem, 'base64');
  return new URLSearchParams({ ...params, sign_type: 'RSA2', sign }).toString();
}

export function postNotify(stack: TestStack, form: string): Promise<Response> {
  return fetch(`${stack.baseUrl}/api/v1/notify/payment/alipay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body: form,
  });
}
