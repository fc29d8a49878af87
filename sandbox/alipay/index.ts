/**
 * An offline Alipay open-platform gateway (gateway.do, API v2 with RSA2: face-to-face (a QR code
 * the buyer scans, or the buyer's code a till scans, and its cancel), JSAPI,
 * page, wap and app payments, refunds, royalty settles, 直付通 onboarding, daily trade
 * statements, transfers to Alipay accounts, and app authorisation with its page and the
 * exchange, refresh and query of app_auth_tokens): a router that signs and checks the wire as Alipay does, its made-up
 * credentials, the settings that point durapay at it, and readers of its state for tests (and a
 * minter of app_auth_tokens). Independent of durapay's Alipay adapter and of alipay-sdk on purpose.
 */
export { createAlipaySandbox, type AlipaySandbox, type AlipaySandboxOptions } from './router';
export type { BarcodeRequests as AlipaySandboxBarcodeRequests } from './barcode';
export { BILL_METHOD, STATEMENT_AMOUNT_PLUS_ONE, STATEMENT_OMIT, beijingDay } from './bills';
export { zipBuffer, zipChunks, type ZipEntry } from './zip';
export type { GatewayLogger as AlipaySandboxLogger } from './gateway';
export { NOTIFY_RETRY_DELAYS_MS, type NotificationHistory } from './notify';
export {
  ALIPAY_SANDBOX_KEY_FILES,
  alipaySettings,
  generateAlipaySandboxKeys,
  loadAlipaySandboxKeys,
  loadOrCreateAlipaySandboxKeys,
  saveAlipaySandboxKeys,
  type AlipaySandboxKeys,
} from './keys';
export type { PayMethod, RefundStatus, TradeStatus } from './store';
export type { AlipaySandboxTrade } from './views';
export type {
  AlipaySandboxRelation,
  AlipaySandboxRoyaltyReturn,
  AlipaySandboxSettlement,
  AlipaySandboxUnfreeze,
  RefundRoyaltyParameter,
  ReceiverType,
  RoyaltyParameter,
  SettleDetail,
  SettleState,
} from './royalty';
export type { AlipaySandboxZftOrder, ZftOrderView, ZftStatus } from './zft';
export {
  TRANSFER_FAIL,
  TRANSFER_LOST,
  TRANSFER_REFUSE,
  TRANSFER_SLOW,
  type AlipaySandboxTransfer,
  type IdentityType,
  type TransferDelays,
  type TransferStatus,
} from './transfers';
export type { AlipaySandboxAppAuth, AppAuthGrant, AppAuthLifetimes } from './app-auth';
