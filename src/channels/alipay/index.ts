/**
 * The Alipay channel (`channel_code: "alipay"`) on the open platform's gateway API with RSA2. The
 * wire is alipay-sdk's: it signs every request, checks every answer's signature (validateSign),
 * builds the page, wap and app payment strings, and verifies notifications. This adapter maps
 * durapay's ports onto Alipay's methods; a secondary merchant (直付通) is named on each trade.
 * One file per port (payments.ts, refunds.ts, sharing.ts, onboarding.ts, accounts.ts,
 * callbacks.ts, statements.ts, transfers.ts, barcode.ts, complaints.ts) over the app's transport (client.ts);
 * wire types and state mapping in transformers.ts, onboarding's body in zft.ts.
 */
import type {
  BuyerSignInPort,
  BarcodePort,
  CallbackCheck,
  CallbackRequest,
  CallbacksPort,
  Channel,
  ChannelCapabilities,
  ChannelDescriptor,
  ChannelFactory,
  ComplaintsPort,
  OnboardingPort,
  PaymentsPort,
  ProfitSharingPort,
  RefundsPort,
  StatementsPort,
  TransfersPort,
} from '../ports';
import { ALIPAY_ACCOUNTS, alipayAccounts, type AlipayAccountsPort } from './accounts';
import { alipayBarcode } from './barcode';
import { alipayBuyerSignIn } from './buyer-sign-in';
import { alipayCallbacks, verifyNotify } from './callbacks';
import { AlipayClient, type AlipayChannelOptions } from './client';
import { alipayComplaints } from './complaints';
import { ALIPAY_SETTINGS, alipayConfig, type AlipayConfig } from './config';
import { alipayOnboarding } from './onboarding';
import { alipayPayments } from './payments';
import { alipayRefunds } from './refunds';
import { alipaySharing } from './sharing';
import { alipayStatements } from './statements';
import { ALIPAY_PAYEES, alipayTransfers } from './transfers';
import { ALIPAY_AUTH_CODE, ALIPAY_MAX_AMOUNT_FEN, ALIPAY_PAY_METHODS } from './transformers';

export { safeText, type AlipayChannelOptions } from './client';

export const ALIPAY_CAPABILITIES: ChannelCapabilities = {
  payMethods: ALIPAY_PAY_METHODS,
  maxAmount: ALIPAY_MAX_AMOUNT_FEN,
  currency: 'CNY',
};

export class AlipayChannel implements Channel {
  readonly code = 'alipay';
  readonly capabilities = ALIPAY_CAPABILITIES;
  readonly payments: PaymentsPort;
  readonly refunds: RefundsPort;
  readonly profitSharing: ProfitSharingPort;
  readonly onboarding: OnboardingPort;
  /**
   * An app_auth_token is confirmed by Alipay's query of it, an smid by its shape; a merchant
   * authorises the app on Alipay's page and its token is exchanged and refreshed (accounts.ts).
   */
  readonly accounts: AlipayAccountsPort;
  readonly callbacks: CallbacksPort;
  /** The day's trade statement (a zip of GBK CSV), the merchant's or a secondary merchant's. */
  readonly statements: StatementsPort;
  /** Payouts to an Alipay account (单笔无密转账), from the merchant's account when it authorised the app. */
  readonly transfers: TransfersPort;
  /** 当面付 条码支付: alipay.trade.pay with the buyer's code, reversed by alipay.trade.cancel. */
  readonly barcode: BarcodePort;
  /** 网页授权 auth_base: a buyer's user id for the hosted checkout's JSAPI order. */
  readonly buyerSignIn: BuyerSignInPort;
  /** 交易投诉: the complaints about the app, answered and fed back (complaints.ts). */
  readonly complaints: ComplaintsPort;
  private readonly client: AlipayClient;

  constructor(options: AlipayChannelOptions) {
    this.client = new AlipayClient(options);
    this.payments = alipayPayments(this.client);
    this.refunds = alipayRefunds(this.client);
    this.profitSharing = alipaySharing(this.client);
    this.onboarding = alipayOnboarding(this.client);
    this.accounts = alipayAccounts(this.client);
    this.callbacks = alipayCallbacks(this.client);
    this.statements = alipayStatements(this.client);
    this.transfers = alipayTransfers(this.client);
    this.barcode = alipayBarcode(this.client);
    this.buyerSignIn = alipayBuyerSignIn(this.client);
    this.complaints = alipayComplaints(this.client);
  }

  /** Is a notification Alipay's? RSA2 over its sorted fields, by the SDK, on the decoded values. */
  verifyNotify(req: CallbackRequest): CallbackCheck {
    return verifyNotify(this.client, req);
  }
}

/** The Alipay adapters of named accounts (one app each). */
export function alipayChannelFactory(accounts: Record<string, AlipayChannelOptions>): ChannelFactory {
  return {
    code: 'alipay',
    accounts: Object.keys(accounts),
    create: (account) => new AlipayChannel(accounts[account]!),
  };
}

/** Alipay: its settings are ALIPAY_* (./config.ts), read into the configuration's `alipay`. */
export const alipayChannel = {
  code: 'alipay',
  label: 'Alipay',
  accounts: ALIPAY_ACCOUNTS,
  payees: ALIPAY_PAYEES,
  /** Alipay's buyer codes (付款码): an order without channel_code whose auth_code is one comes here. */
  authCodes: ALIPAY_AUTH_CODE,
  settings: { schema: ALIPAY_SETTINGS, read: alipayConfig },
  describe: (settings) => `${settings.gatewayUrl} (app_id ${settings.appId})`,
  /** The configured app (`default`), or undefined when ALIPAY_APP_ID is not set. */
  fromConfig(config, settings) {
    if (!settings) return undefined;
    return alipayChannelFactory({
      // Short enough that a refund's follow-up query fits in the same attempt of its activity.
      default: { ...settings, timeoutMs: Math.max(1_000, config.api.requestTimeoutMs - 5_000) },
    });
  },
} satisfies ChannelDescriptor<'alipay', AlipayConfig>;
