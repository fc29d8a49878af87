/**
 * The WeChat Pay API v3 channel (`channel_code: "wechatpay"`), as a service provider (服务商):
 * every call carries sp_mchid and the merchant's sub_mchid. The wire is wechatpay-axios-plugin's
 * (request signing, response verification); this adapter maps durapay's ports onto the partner
 * APIs, with wire types and state mapping in transformers.ts and callback crypto in
 * signature.ts; onboarding's body and states are in applyment.ts. One file per port (payments.ts,
 * refunds.ts, sharing.ts, onboarding.ts, accounts.ts, callbacks.ts, statements.ts, transfers.ts)
 * over the account's transport (client.ts).
 */
import type { Channel, ChannelCapabilities, ChannelDescriptor, ChannelFactory } from '../ports';
import type {
  AccountsPort,
  BarcodePort,
  BuyerSignInPort,
  CallbacksPort,
  ContractsPort,
  OnboardingPort,
  PaymentsPort,
  ProfitSharingPort,
  RefundsPort,
  StatementsPort,
  TransfersPort,
} from '../ports';
import { WECHATPAY_ACCOUNTS, wechatpayAccounts } from './accounts';
import { wechatpayBarcode } from './barcode';
import { wechatpayBuyerSignIn } from './buyer-sign-in';
import { wechatpayCallbacks } from './callbacks';
import { WechatpayClient, type WechatpayChannelOptions } from './client';
import { WECHATPAY_SETTINGS, wechatpayConfig, type WechatpayConfig } from './config';
import { wechatpayOnboarding } from './onboarding';
import { wechatpayPayments } from './payments';
import { wechatpayRefunds } from './refunds';
import { wechatpaySharing } from './sharing';
import { wechatpayStatements } from './statements';
import { WECHATPAY_AUTH_CODE, WECHATPAY_PAY_METHODS } from './transformers';
import { WECHATPAY_PAYEES, wechatpayTransfers } from './transfers';
import { wechatpayComplaints, type WechatpayComplaintsPort } from './complaints';
import { wechatpayContracts, wechatpayV2Callbacks } from './contracts';
import { WechatpayV2Client } from './v2-client';

export type { WechatpayChannelOptions } from './client';

/**
 * WeChat Pay's `amount.total` is a 32-bit int: 2^31 − 1 fen is the most one order can be, and
 * above it WeChat Pay refuses the create with PARAM_ERROR. Checked when the order is validated
 * (SPEC §1: 400 invalid_amount), so that it never reaches the channel.
 */
export const WECHATPAY_MAX_AMOUNT_FEN = 2 ** 31 - 1;

export const WECHATPAY_CAPABILITIES: ChannelCapabilities = {
  payMethods: WECHATPAY_PAY_METHODS,
  maxAmount: WECHATPAY_MAX_AMOUNT_FEN,
  currency: 'CNY',
  merchantRequired: true,
};

export class WechatpayChannel implements Channel {
  readonly code = 'wechatpay';
  readonly capabilities = WECHATPAY_CAPABILITIES;
  readonly payments: PaymentsPort;
  readonly refunds: RefundsPort;
  /** 付款码 by codepay, reversed (撤销) when the buyer does not confirm or the answer is lost. */
  readonly barcode: BarcodePort;
  /**
   * Partner profit sharing: receivers are added to the sub-merchant first, then one sharing
   * order per durapay share, on the payment's transaction_id, with the rest unfrozen at the end.
   */
  readonly profitSharing: ProfitSharingPort;
  readonly onboarding: OnboardingPort;
  /** A claimed sub_mchid is confirmed by reading its settlement account as its service provider. */
  readonly accounts: AccountsPort;
  readonly callbacks: CallbacksPort;
  /** A sub-merchant's day: the tradebill (ALL, gzip) whose SHA-1 WeChat Pay publishes. */
  readonly statements: StatementsPort;
  /**
   * 商家转账 to a WeChat user's balance, confirmed by the user: the partner form for a merchant
   * with a sub_mchid, the service provider's own account without one. `appid` is always the
   * configured WECHATPAY_SP_APPID, so a payee's openid must be of the service provider's app.
   */
  readonly transfers: TransfersPort;
  /** Web OAuth snsapi_base for a buyer's openid of sp_appid, when its AppSecret is configured. */
  readonly buyerSignIn?: BuyerSignInPort;
  readonly complaints: WechatpayComplaintsPort;
  /**
   * 委托代扣 when the account has its API v2 key and contract template (WECHATPAY_APIV2_KEY,
   * WECHATPAY_PAPAY_PLAN_ID): signing on the 公众号 page, notices, deductions, unsigning.
   */
  readonly contracts?: ContractsPort;

  constructor(options: WechatpayChannelOptions) {
    const client = new WechatpayClient(options);
    this.payments = wechatpayPayments(client);
    this.refunds = wechatpayRefunds(client);
    this.barcode = wechatpayBarcode(client, this.payments);
    this.profitSharing = wechatpaySharing(client);
    this.onboarding = wechatpayOnboarding(client);
    this.accounts = wechatpayAccounts(client);
    const v2 = options.papay
      ? new WechatpayV2Client({
          baseUrl: options.baseUrl,
          spMchid: options.spMchid,
          apiV2Key: options.papay.apiV2Key,
          timeoutMs: options.timeoutMs,
        })
      : undefined;
    this.callbacks = wechatpayCallbacks(client, v2 && wechatpayV2Callbacks(options.spMchid, v2));
    if (v2 && options.papay) this.contracts = wechatpayContracts(client, v2, options.papay);
    this.statements = wechatpayStatements(client);
    this.transfers = wechatpayTransfers(client);
    this.buyerSignIn = wechatpayBuyerSignIn(options);
    this.complaints = wechatpayComplaints(client);
  }
}

/** The WeChat Pay adapters of named accounts (one service-provider account each). */
export function wechatpayChannelFactory(accounts: Record<string, WechatpayChannelOptions>): ChannelFactory {
  return {
    code: 'wechatpay',
    accounts: Object.keys(accounts),
    create: (account) => new WechatpayChannel(accounts[account]!),
  };
}

/** WeChat Pay: its settings are WECHATPAY_* (./config.ts), read into the configuration's `wechatpay`. */
export const wechatpayChannel = {
  code: 'wechatpay',
  label: 'WeChat Pay',
  accounts: WECHATPAY_ACCOUNTS,
  payees: WECHATPAY_PAYEES,
  authCodes: WECHATPAY_AUTH_CODE,
  settings: { schema: WECHATPAY_SETTINGS, read: wechatpayConfig },
  describe: (settings) => `${settings.baseUrl} (sp_mchid ${settings.spMchid})`,
  /** The configured account (`default`), or undefined when WECHATPAY_SP_MCHID is not set. */
  fromConfig(config, settings) {
    if (!settings) return undefined;
    return wechatpayChannelFactory({
      default: { ...settings, timeoutMs: Math.max(1_000, config.api.requestTimeoutMs - 2_000) },
    });
  },
} satisfies ChannelDescriptor<'wechatpay', WechatpayConfig>;
