/**
 * A merchant's accounts at the channels (SPEC §5.8): which fields name one, and how it is shown.
 * Every channel declares its own kinds of account in its descriptor (src/channels/<code>/); the
 * schemas, views and claims here are made from those declarations, so that a new channel's
 * accounts need nothing here.
 */
import Joi from 'joi';
import type { AccountClaim, AccountKind } from '../../channels/ports';
import { CHANNEL_ACCOUNTS, accountKindsOf, holdsToken } from '../../channels/registry';
import { maskBankAccount } from './rules';
import { eitherOf } from '../../platform/words';

/** The kinds of account each channel takes (the field that names each), for the channels that have accounts. */
export const ACCOUNT_KINDS: Readonly<Record<string, readonly AccountKind[]>> = Object.fromEntries(
  CHANNEL_ACCOUNTS.map(({ code, accounts }) => [code, accounts.kinds.map((k) => k.kind)]),
);

/**
 * The body of `PUT …/channel-accounts/{channel_code}` for one channel, its messages naming the
 * field: exactly one of the fields the channel declares, each of its declared shape.
 */
export function attachSchema(channelCode: string): Joi.ObjectSchema {
  const kinds = accountKindsOf(channelCode);
  const fields: Record<string, Joi.Schema> = {};
  for (const k of kinds) {
    let field = Joi.string().pattern(k.pattern).messages({ 'string.pattern.base': k.patternMessage });
    if (kinds.length === 1) field = field.required();
    fields[k.kind] = field;
  }
  let schema = Joi.object(fields)
    .required()
    .messages({ 'object.unknown': `{{#label}} is not a field of a ${channelCode} account` });
  if (kinds.length > 1) {
    const names = kinds.map((k) => k.kind);
    schema = schema.xor(...names).messages({
      'object.missing': `one of ${eitherOf(names)} is required`,
      'object.xor':
        names.length === 2
          ? `give either ${names[0]} or ${names[1]}, not both`
          : `give only one of ${names.join(', ')}`,
    });
  }
  return schema;
}

/**
 * Every channel's account fields at once, for the OpenAPI document (each channel takes its own,
 * `{channel}: {what it is}`); a field two channels share is described once, naming both.
 */
export const attachAnySchema = Joi.object(
  Object.fromEntries(
    [...new Set(CHANNEL_ACCOUNTS.flatMap(({ accounts }) => accounts.kinds.map((k) => k.kind)))].map(
      (kind) => {
        const described = CHANNEL_ACCOUNTS.flatMap(({ code, accounts }) =>
          accounts.kinds.filter((k) => k.kind === kind).map((k) => `${code}: ${k.description}`),
        );
        const example = CHANNEL_ACCOUNTS.flatMap(({ accounts }) => accounts.kinds).find(
          (k) => k.kind === kind,
        )!.example;
        return [kind, Joi.string().description(described.join(' ')).example(example)];
      },
    ),
  ),
);

/** The claim a valid attach body for the channel makes: the one declared field it holds. */
export function claimOf(channelCode: string, body: Record<string, string | undefined>): AccountClaim {
  for (const k of accountKindsOf(channelCode)) {
    const value = body[k.kind];
    if (value !== undefined) return { kind: k.kind, value };
  }
  throw new Error(`an attach body for ${channelCode} names no account it declares`);
}

/** The number a claim names, as the account's row keeps it (a token has none until confirmed). */
export function claimedNumber(channelCode: string, claim: AccountClaim): string | null {
  return holdsToken(channelCode, claim.kind) ? null : claim.value;
}

/** `active`; `expired`: an app_auth_token that could not be refreshed (orders at it fail). */
export type AccountStatus = 'active' | 'expired';
/** Where an account came from. */
export type AccountSource = 'onboarding' | 'attached' | 'authorized' | 'migrated';

/** An account as the repository answers it, its token opened. */
export interface ChannelAccount {
  id: number;
  appId: string;
  merchantId: string;
  channelCode: string;
  kind: AccountKind;
  accountNo: string | null;
  /** A token kind's value, opened (`holds: 'token'`); null for an account named by its number. */
  token: string | null;
  tokenExpiresAt: Date | null;
  status: AccountStatus;
  source: AccountSource;
  activatedAt: Date;
  detachedAt: Date | null;
  updatedAt: Date;
}

/**
 * The account as the API shows it (GET …/channel-accounts, the merchant's `channel_accounts`): its
 * field with its number; a token masked, with the number the channel confirmed as `user_id` and
 * when the token ends.
 */
export function accountView(a: ChannelAccount) {
  const token = holdsToken(a.channelCode, a.kind);
  return {
    channel_code: a.channelCode,
    ...(token ? { [a.kind]: maskBankAccount(a.token), user_id: a.accountNo } : { [a.kind]: a.accountNo }),
    status: a.status,
    source: a.source,
    ...(token ? { token_expires_at: a.tokenExpiresAt?.toISOString() ?? null } : {}),
    activated_at: a.activatedAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

/** Whether an attach names the account already attached (then it changes nothing). */
export function sameAccount(a: ChannelAccount, claim: AccountClaim): boolean {
  if (a.kind !== claim.kind) return false;
  if (holdsToken(a.channelCode, claim.kind)) return a.token === claim.value;
  return a.accountNo === claim.value;
}
