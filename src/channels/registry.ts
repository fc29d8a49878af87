import type {
  AccountKindDeclaration,
  Channel,
  ChannelAccountsDeclaration,
  ChannelCoreConfig,
  ChannelDescriptor,
  ChannelFactory,
  ChannelSettings,
  PayeeKindDeclaration,
} from './ports';
import { ChannelError, type ChannelErrorKind } from './errors';
import { alipayChannel } from './alipay';
import { sandboxChannel } from './sandbox';
import { wechatpayChannel } from './wechatpay';

// The factories' contract lives with the ports, so that no channel folder imports the registry.
export type { ChannelDescriptor, ChannelFactory } from './ports';

/**
 * Every channel durapay knows. Adding one: a folder under src/channels/ and one line here. The
 * real channels first, the sandbox (their stand-in) last: the lists made from it read so.
 */
const CHANNELS = [wechatpayChannel, alipayChannel, sandboxChannel] as const;

type Listed = (typeof CHANNELS)[number];

/**
 * The channels' own settings as the configuration holds them, each under its channel's code
 * (`wechatpay`, `alipay`): undefined when the channel is not configured.
 */
export type ChannelSettingsConfig = {
  [D in Listed as SettingsOf<D> extends never ? never : D['code']]?: SettingsOf<D>;
};

/** A listed channel's settings type; never for a channel without settings of its own. */
type SettingsOf<D> = D extends { settings: ChannelSettings<infer S> } ? S : never;

/** The channels that have settings of their own, in the registry's order, for the configuration. */
export const CHANNEL_SETTINGS: readonly { code: string; settings: ChannelSettings<unknown> }[] =
  CHANNELS.flatMap((d: ChannelDescriptor<string, unknown>) =>
    d.settings ? [{ code: d.code, settings: d.settings }] : [],
  );

/**
 * The configured channels that have settings of their own, for the start banner: each one's
 * label and where its settings point (`WeChat Pay`, `https://… (sp_mchid …)`).
 */
export function describeConfiguredChannels(
  config: ChannelSettingsConfig,
): { code: string; label: string; where: string }[] {
  const settingsOf = config as unknown as Record<string, unknown>;
  return CHANNELS.flatMap((d: ChannelDescriptor<string, unknown>) => {
    const settings = settingsOf[d.code];
    return d.settings && d.describe && settings !== undefined
      ? [{ code: d.code, label: d.label, where: d.describe(settings) }]
      : [];
  });
}

/** Every listed channel's code, in the registry's order. */
export type ChannelCode = Listed['code'];

/** A listed channel's account kind declarations, as written (literal). */
type DeclaredKinds<D> = D extends { accounts: { kinds: readonly (infer K)[] } } ? K : never;

/** The codes of the listed channels that declare merchant accounts. */
export type AccountChannelCode = Listed extends infer D
  ? D extends { code: infer C extends string; accounts: object }
    ? C
    : never
  : never;

/** The account kinds a listed channel declares (the fields that name its accounts); never for none. */
export type AccountKindOf<C extends string = AccountChannelCode> =
  DeclaredKinds<Extract<Listed, { code: C }>> extends infer K
    ? K extends { kind: infer N extends string }
      ? N
      : never
    : never;

/** The account kinds any listed channel declares whose value is the account's number / a token. */
export type NumberAccountKind = Extract<DeclaredKinds<Listed>, { holds: 'number' }>['kind'];
export type TokenAccountKind = Extract<DeclaredKinds<Listed>, { holds: 'token' }>['kind'];

/** The payee types any listed channel declares. */
export type PayeeType = Listed extends infer D
  ? D extends { payees: readonly (infer P)[] }
    ? P extends { type: infer T extends string }
      ? T
      : never
    : never
  : never;

const LISTED = CHANNELS as readonly ChannelDescriptor<string, unknown>[];

/** Every listed channel's code, in the registry's order (configured or not). */
export const CHANNEL_CODES = LISTED.map((d) => d.code) as readonly ChannelCode[];

/** The channels whose merchants have accounts there, with what names those accounts (SPEC §5.8). */
export const CHANNEL_ACCOUNTS: readonly { code: string; accounts: ChannelAccountsDeclaration }[] =
  LISTED.flatMap((d) => (d.accounts ? [{ code: d.code, accounts: d.accounts }] : []));

/** The kinds of account a listed channel's merchants have there; empty for a channel without. */
export function accountKindsOf(code: string): readonly AccountKindDeclaration[] {
  return channelDescriptor(code)?.accounts?.kinds ?? [];
}

/** A listed channel's declared kind of account, or undefined. */
export function accountKindOf(code: string, kind: string): AccountKindDeclaration | undefined {
  return accountKindsOf(code).find((k) => k.kind === kind);
}

/** Whether an account of this kind at this channel is a token (sealed, masked, followed until it ends). */
export function holdsToken(code: string, kind: string): boolean {
  return accountKindOf(code, kind)?.holds === 'token';
}

/** The kind of account a channel's authorisation gives (its token kind), or undefined when it has none. */
export function tokenKindOf(code: string): string | undefined {
  return accountKindsOf(code).find((k) => k.holds === 'token')?.kind;
}

/** Every payee kind a listed channel pays, each type once (the first declaration's words), in order. */
export const PAYEE_KINDS: readonly PayeeKindDeclaration[] = LISTED.flatMap((d) => d.payees ?? []).filter(
  (p, i, all) => all.findIndex((q) => q.type === p.type) === i,
);

/**
 * The listed channel whose wallet issues this buyer code (SPEC §14: WeChat Pay's start 10–15,
 * Alipay's 25–30, the sandbox's its own), or undefined when none claims it.
 */
export function channelOfAuthCode(authCode: string): string | undefined {
  return LISTED.find((d) => d.authCodes?.test(authCode))?.code;
}

/** A listed channel's descriptor, or undefined when no channel has the code. */
export function channelDescriptor(code: string): ChannelDescriptor<string, unknown> | undefined {
  return LISTED.find((d) => d.code === code);
}

export interface ChannelRegistry {
  /**
   * The adapter for a `channel_code` and one of its accounts (the default when absent), or
   * undefined when the channel is unknown or not configured, or has no such account.
   */
  get(code: string, account?: string): Channel | undefined;
  /** The codes of every configured channel. */
  codes(): string[];
  /** The names of a configured channel's accounts, the default first; empty for an unknown channel. */
  accounts(code: string): string[];
}

/** Maps `channel_code` to its accounts' adapters; a channel without configuration is simply absent. */
export function createChannelRegistry(factories: readonly ChannelFactory[]): ChannelRegistry {
  const channels = new Map<string, { fallback: string | undefined; accounts: Map<string, Channel> }>();
  for (const factory of factories) {
    if (channels.has(factory.code)) throw new Error(`channel ${factory.code} is configured twice`);
    channels.set(factory.code, {
      fallback: factory.accounts[0],
      accounts: new Map(factory.accounts.map((account) => [account, factory.create(account)])),
    });
  }
  return {
    get: (code, account) => {
      const channel = channels.get(code);
      const name = account ?? channel?.fallback;
      return name === undefined ? undefined : channel?.accounts.get(name);
    },
    codes: () => [...channels.keys()],
    accounts: (code) => {
      const channel = channels.get(code);
      if (!channel) return [];
      const names = [...channel.accounts.keys()];
      return [...names.filter((n) => n === channel.fallback), ...names.filter((n) => n !== channel.fallback)];
    },
  };
}

/** Every channel this deployment is configured for. */
export function channelsFromConfig(
  config: ChannelCoreConfig & ChannelSettingsConfig,
  masterKey: Buffer,
): ChannelRegistry {
  // Each channel's settings are under its code (ChannelSettingsConfig).
  const settingsOf = config as unknown as Record<string, unknown>;
  return createChannelRegistry(
    CHANNELS.map((d: ChannelDescriptor<string, unknown>) =>
      d.fromConfig(config, d.settings ? settingsOf[d.code] : undefined, masterKey),
    ).filter((f) => f !== undefined),
  );
}

/** Told of every call a channel's ports make upstream: how long it took and, if it failed, why. */
export type ChannelCallObserver = (
  channel: string,
  operation: string,
  seconds: number,
  failureKind?: ChannelErrorKind | 'other',
) => void;

/**
 * The ports whose methods call the upstream and answer once (callbacks only read requests;
 * statements' `parse` streams a file, which an observer that awaits each call would break: a
 * reconciliation run records how its statement was fetched instead).
 */
const OBSERVED_PORTS = ['payments', 'refunds', 'profitSharing', 'onboarding', 'barcode'] as const;

/**
 * The same registry, with every upstream call of every adapter timed and told to `observe`
 * (operation `payments.create`, `refunds.query`, …). A failure is still thrown to the caller.
 */
export function observeChannelCalls(
  registry: ChannelRegistry,
  observe: ChannelCallObserver,
): ChannelRegistry {
  const wrapped = new Map<Channel, Channel>();
  const wrap = (channel: Channel): Channel => {
    let w = wrapped.get(channel);
    if (!w) {
      // The adapter stays the prototype (its code, capabilities, callbacks); own properties
      // shadow the observed ports, whatever kind of property the adapter declared them as.
      const ports: PropertyDescriptorMap = {};
      for (const name of OBSERVED_PORTS) {
        const port = channel[name];
        if (port) ports[name] = { value: observedPort(port, channel.code, name, observe), enumerable: true };
      }
      w = Object.create(channel, ports) as Channel;
      wrapped.set(channel, w);
    }
    return w;
  };
  return {
    get: (code, account) => {
      const channel = registry.get(code, account);
      return channel && wrap(channel);
    },
    codes: () => registry.codes(),
    accounts: (code) => registry.accounts(code),
  };
}

function observedPort<T extends object>(
  port: T,
  code: string,
  name: string,
  observe: ChannelCallObserver,
): T {
  return new Proxy(port, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      // Synchronous helpers (problemWith) and properties (fileIdPattern) make no call upstream.
      if (typeof value !== 'function' || typeof key !== 'string' || key === 'problemWith') return value;
      const operation = `${name}.${key}`;
      return async (...args: unknown[]) => {
        const started = process.hrtime.bigint();
        const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
        try {
          const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
          observe(code, operation, seconds());
          return result;
        } catch (err) {
          observe(code, operation, seconds(), err instanceof ChannelError ? err.kind : 'other');
          throw err;
        }
      };
    },
  });
}
