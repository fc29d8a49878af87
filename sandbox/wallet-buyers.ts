/**
 * The offline WeChat Pay and Alipay upstreams' test buyers (SPEC §14): a wallet code whose digits
 * after its channel's two-digit prefix begin `99` is a test buyer, and the digit after that says
 * what the buyer does, as in the sandbox's own codes (src/channels/sandbox/barcode.ts,
 * `SANDBOX_BUYERS`). Any other code of the wallet's shape pays at once, as a real wallet
 * without a password does. So a till, a test or a newcomer meets every case a real wallet gives:
 *
 *   WeChat Pay `13 99 <digit> …` (18 digits), Alipay `28 99 <digit> …` (18 digits).
 */
import { randomInt } from 'node:crypto';
import { SANDBOX_BUYERS, type SandboxBuyer } from '../src/channels/sandbox/barcode';

/** The wallets the offline upstreams serve, and the prefix their test codes use. */
const WALLET_PREFIX = { wechatpay: '13', alipay: '28' } as const;

export type Wallet = keyof typeof WALLET_PREFIX;

/** What the buyer of a code does at the offline upstream: a test buyer's digit, else `pays`. */
export function walletBuyerOf(authCode: string): SandboxBuyer {
  const wallet = (Object.values(WALLET_PREFIX) as string[]).includes(authCode.slice(0, 2));
  if (!wallet || authCode.slice(2, 4) !== '99') return 'pays';
  const digit = authCode[4];
  return (Object.keys(SANDBOX_BUYERS) as SandboxBuyer[]).find((b) => SANDBOX_BUYERS[b] === digit) ?? 'pays';
}

/** A fresh 18-digit code of the wallet, for a buyer who does `buyer`. */
export function walletAuthCode(wallet: Wallet, buyer: SandboxBuyer = 'pays'): string {
  let rest = '';
  for (let i = 0; i < 13; i++) rest += String(randomInt(10));
  return `${WALLET_PREFIX[wallet]}99${SANDBOX_BUYERS[buyer]}${rest}`;
}
