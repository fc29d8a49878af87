/**
 * An offline WeChat Pay API v3 sandbox (service-provider payment, code payment, profit-sharing, return, abnormal-refund, statement, transfer and onboarding APIs): a
 * router that signs and checks the wire as WeChat does, its made-up credentials, the settings
 * that point durapay at it, and readers of its sharing state for tests. Independent of durapay's
 * WeChat Pay adapter and of wechatpay-axios-plugin on purpose.
 */
export {
  createWechatpaySandbox,
  type WechatpaySandbox,
  type WechatpaySandboxCodepay,
  type WechatpaySandboxLogger,
  type WechatpaySandboxOptions,
} from './router';
export { CALLBACK_RETRY_DELAYS_MS } from './callbacks';
export {
  generateWechatpaySandboxKeys,
  loadOrCreateWechatpaySandboxKeys,
  loadWechatpaySandboxKeys,
  saveWechatpaySandboxKeys,
  wechatpaySettings,
  WECHATPAY_SANDBOX_KEY_FILES,
  type WechatpaySandboxKeys,
} from './keys';
export type {
  AbnormalRefundApplication,
  AbnormalRefundType,
  BuyerResult,
  RefundStatus,
  TradeKind,
  TradeState,
} from './store';
export type { ApplymentRecord, ApplymentState } from './applyment';
export type { TransferBillState } from './transfers';
export type { PlatformCertificate } from './certificates';
export type {
  ReceiverType,
  RelationType,
  ReturnResult,
  SharingResult,
  SharingState,
  WechatpaySandboxReceiver,
  WechatpaySandboxReturn,
  WechatpaySandboxSharing,
  WechatpaySandboxUnfreeze,
} from './sharing';
