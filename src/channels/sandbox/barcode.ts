/**
 * The sandbox's barcode payments (SPEC §14): its buyer codes, and its port over the simulator's
 * `POST /v1/barcode-payments` and `POST /v1/orders/{trade_no}/reverse`.
 *
 * A sandbox buyer code is 18 digits starting `99` (no wallet of WeChat Pay, 10–15, or Alipay,
 * 25–30, starts so); its third digit says what the sandbox's buyer does, so that a till, a test
 * or `durapay try --barcode` can meet every case a real wallet gives:
 */
import { randomInt } from 'node:crypto';
import type { BarcodePort } from '../ports';
import type { SandboxClient } from './client';
import { parseBarcodeAnswer, parseReverseAnswer } from './transformers';

export const SANDBOX_BUYERS = {
  /** Pays at once. */
  pays: '0',
  /** Confirms in the wallet a moment later (the simulator's `buyerConfirmMs`). */
  confirms_later: '1',
  /** Never confirms: the payment is reversed when the wait ends. */
  never_confirms: '2',
  /** Has not enough balance: the code is refused. */
  insufficient: '3',
  /** Is charged, and the answer is lost on the way back (the connection drops). */
  answer_lost: '4',
  /** Confirms just as the reverse arrives: the reverse returns the money. */
  confirms_at_reverse: '5',
  /** Confirms just as the reverse arrives, and the reverse is refused: the payment stands. */
  reverse_refused: '6',
  /** Shows a code that has expired: it is refused. */
  expired: '7',
} as const;

export type SandboxBuyer = keyof typeof SANDBOX_BUYERS;

/** The sandbox's buyer codes. */
export const SANDBOX_AUTH_CODE = /^99[0-9]\d{15}$/;

/** A fresh sandbox buyer code for what the buyer is to do. */
export function sandboxAuthCode(buyer: SandboxBuyer = 'pays'): string {
  let rest = '';
  for (let i = 0; i < 15; i++) rest += String(randomInt(10));
  return `99${SANDBOX_BUYERS[buyer]}${rest}`;
}

/** What the buyer of a sandbox code does; undefined for a code that is not the sandbox's. */
export function sandboxBuyerOf(authCode: string): SandboxBuyer | undefined {
  if (!SANDBOX_AUTH_CODE.test(authCode)) return undefined;
  const digit = authCode[2];
  return (Object.keys(SANDBOX_BUYERS) as SandboxBuyer[]).find((b) => SANDBOX_BUYERS[b] === digit);
}

export function sandboxBarcode(client: SandboxClient): BarcodePort {
  return {
    pay: async (ctx, input) => {
      const answer = await client.call('POST', '/v1/barcode-payments', {
        trade_no: input.tradeNo,
        amount: input.amount,
        currency: ctx.currency,
        subject: input.subject,
        auth_code: input.authCode,
        ...(input.deviceId ? { device_id: input.deviceId } : {}),
        ...(input.storeId ? { store_id: input.storeId } : {}),
        notify_url: input.callbackUrl,
        sub_merchant_no: ctx.subMerchantNo ?? null,
        profit_sharing: input.profitSharing,
      });
      return parseBarcodeAnswer(client.ok('pay by barcode', answer));
    },
    reverse: async (_ctx, tradeNo) => {
      const answer = await client.call('POST', `/v1/orders/${encodeURIComponent(tradeNo)}/reverse`, {});
      // The simulator never heard of the payment: nothing was taken, nothing to give back.
      if (client.isUnknown(answer, 'order_not_found')) {
        return { status: 'reversed', refunded: false, unseen: true };
      }
      // A refusal (4xx, the payment stands) throws ChannelError('refused') with the simulator's words.
      return parseReverseAnswer(client.ok('reverse barcode payment', answer));
    },
  };
}
