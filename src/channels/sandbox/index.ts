/**
 * The sandbox channel (`channel_code: "sandbox"`): the adapter of durapay's own simulator
 * (sandbox/), which it talks to over HTTP exactly as to a real upstream. One file per port
 * (payments.ts, refunds.ts, sharing.ts, onboarding.ts, accounts.ts, callbacks.ts, statements.ts,
 * transfers.ts) over the transport (client.ts); wire types and parsing in transformers.ts, signing
 * in signature.ts.
 */
import { createHmac } from 'node:crypto';
import type { PayMethod } from '../../modules/orders/rules';
import type {
  AccountsPort,
  CallbacksPort,
  Channel,
  ChannelCapabilities,
  ChannelCoreConfig,
  ChannelDescriptor,
  ChannelFactory,
  OnboardingPort,
  PaymentsPort,
  ProfitSharingPort,
  RefundsPort,
  StatementsPort,
  TransfersPort,
  BarcodePort,
  ContractsPort,
} from '../ports';
import { SANDBOX_ACCOUNTS, sandboxAccounts } from './accounts';
import { SANDBOX_AUTH_CODE, sandboxBarcode } from './barcode';
import { sandboxCallbacks } from './callbacks';
import { sandboxContracts } from './contracts';
import { SandboxClient, type SandboxChannelOptions } from './client';
import { sandboxOnboarding } from './onboarding';
import { sandboxPayments } from './payments';
import { sandboxRefunds } from './refunds';
import { sandboxSharing } from './sharing';
import { sandboxStatements } from './statements';
import { SANDBOX_PAYEES, sandboxTransfers } from './transfers';

export type { SandboxChannelOptions } from './client';
export { SANDBOX_PERSONAL_RECEIVERS } from './sharing';
export { SANDBOX_STATEMENT_SHA1_HEADER } from './statements';
export { SANDBOX_PAYEE_TYPES, SANDBOX_TRANSFER_LIMITS } from './transfers';
export {
  SANDBOX_AUTH_CODE,
  SANDBOX_BUYERS,
  sandboxAuthCode,
  sandboxBuyerOf,
  type SandboxBuyer,
} from './barcode';

/** Every pay method durapay knows: the simulator takes them all. */
export const SANDBOX_PAY_METHODS: readonly PayMethod[] = [
  'qr_code',
  'jsapi',
  'mini_program',
  'app',
  'h5',
  'web',
  'barcode',
];

export const SANDBOX_CAPABILITIES: ChannelCapabilities = {
  payMethods: SANDBOX_PAY_METHODS,
  maxAmount: 10 ** 12,
  currency: 'CNY',
};

/** The adapter: its ports over one pooled, signed transport to the simulator. */
export class SandboxChannel implements Channel {
  readonly code = 'sandbox';
  readonly capabilities: ChannelCapabilities;
  readonly payments: PaymentsPort;
  readonly refunds: RefundsPort;
  readonly profitSharing: ProfitSharingPort;
  readonly onboarding: OnboardingPort;
  readonly accounts: AccountsPort;
  readonly callbacks: CallbacksPort;
  /** WeChat Pay's tradebill format, so that reconciliation reads both the same way. */
  readonly statements: StatementsPort;
  readonly transfers: TransfersPort;
  /** Its buyer codes say what the buyer does (./barcode.ts), so every case of a till can be met. */
  readonly barcode: BarcodePort;
  /** WeChat Pay 委托代扣's rules: 07:00–22:00 China time, once a day, a notice a day before (./contracts.ts). */
  readonly contracts: ContractsPort;
  private readonly client: SandboxClient;

  constructor(options: SandboxChannelOptions) {
    this.client = new SandboxClient(options);
    this.capabilities = {
      ...SANDBOX_CAPABILITIES,
      maxAmount: options.maxAmount ?? SANDBOX_CAPABILITIES.maxAmount,
    };
    this.payments = sandboxPayments(this.client);
    this.refunds = sandboxRefunds(this.client);
    this.profitSharing = sandboxSharing(this.client);
    this.onboarding = sandboxOnboarding(this.client);
    this.accounts = sandboxAccounts(this.client);
    this.callbacks = sandboxCallbacks(this.client);
    this.statements = sandboxStatements(this.client);
    this.transfers = sandboxTransfers(this.client);
    this.barcode = sandboxBarcode(this.client);
    this.contracts = sandboxContracts(this.client);
  }

  /** Ends the pooled connections (for tests and shutdown); the channel is unusable afterwards. */
  close(): Promise<void> {
    return this.client.close();
  }
}

/** The sandbox's shared secret: configured, or derived from the master key so every process agrees. */
export function sandboxSecret(config: ChannelCoreConfig, masterKey: Buffer): string {
  return (
    config.sandbox.secret ?? createHmac('sha256', masterKey).update('durapay sandbox channel').digest('hex')
  );
}

/** The sandbox's adapters, one per named account (each a simulator, or one with another secret). */
export function sandboxChannelFactory(accounts: Record<string, SandboxChannelOptions>): ChannelFactory {
  return {
    code: 'sandbox',
    accounts: Object.keys(accounts),
    create: (account) => new SandboxChannel(accounts[account]!),
  };
}

/** The sandbox: its settings are core ones (SANDBOX_*), which the development hook reads too. */
export const sandboxChannel = {
  code: 'sandbox',
  label: 'Sandbox',
  accounts: SANDBOX_ACCOUNTS,
  payees: SANDBOX_PAYEES,
  authCodes: SANDBOX_AUTH_CODE,
  /** The configured sandbox (one account, `default`), or undefined when it is disabled. */
  fromConfig(config, _settings, masterKey) {
    if (!config.sandbox.enabled) return undefined;
    return sandboxChannelFactory({
      default: {
        baseUrl: config.sandbox.baseUrl,
        secret: sandboxSecret(config, masterKey),
        // Leaves room inside the request deadline for the workflow around the call.
        timeoutMs: Math.max(1_000, config.api.requestTimeoutMs - 2_000),
        maxAmount: config.sandbox.maxAmount,
      },
    });
  },
} satisfies ChannelDescriptor<'sandbox'>;
