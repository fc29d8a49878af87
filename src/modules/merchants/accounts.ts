/** A merchant's accounts at the channels (SPEC §5.8): which fields name one, and how it is shown. */
import Joi from 'joi';
import type { AccountClaim, AccountKind } from '../../channels/ports';
import { maskBankAccount } from './rules';

/** The kinds of account each channel takes, and the field that names each. */
export const ACCOUNT_KINDS: Readonly<Record<string, readonly AccountKind[]>> = {
  wechatpay: ['sub_mchid'],
  alipay: ['smid', 'app_auth_token'],
  sandbox: ['sub_merchant_no'],
};

/** An Alipay 直付通 secondary merchant's smid, and an Alipay user id: 2088 and 12 digits. */
export const ALIPAY_USER_ID = /^2088\d{12}$/;

/** The body of `PUT …/channel-accounts/{channel_code}` for one channel, its messages naming the field. */
export function attachSchema(channelCode: string): Joi.ObjectSchema {
  const kinds = ACCOUNT_KINDS[channelCode] ?? [];
  const fields: Record<string, Joi.Schema> = {};
  if (kinds.includes('sub_mchid'))
    fields.sub_mchid = Joi.string()
      .pattern(/^\d{1,32}$/)
      .required()
      .messages({ 'string.pattern.base': 'sub_mchid must be the sub-merchant number: 1 to 32 digits' });
  if (kinds.includes('smid'))
    fields.smid = Joi.string()
      .pattern(ALIPAY_USER_ID)
      .messages({ 'string.pattern.base': 'smid must be 2088 followed by 12 digits' });
  if (kinds.includes('app_auth_token'))
    fields.app_auth_token = Joi.string()
      .pattern(/^[A-Za-z0-9._-]{1,128}$/)
      .messages({
        'string.pattern.base':
          'app_auth_token must be 1 to 128 characters of letters, digits, ".", "_" and "-"',
      });
  if (kinds.includes('sub_merchant_no'))
    fields.sub_merchant_no = Joi.string()
      .pattern(/^[A-Za-z0-9_-]{1,64}$/)
      .required()
      .messages({ 'string.pattern.base': 'sub_merchant_no must be 1 to 64 characters of [A-Za-z0-9_-]' });
  let schema = Joi.object(fields)
    .required()
    .messages({ 'object.unknown': `{{#label}} is not a field of a ${channelCode} account` });
  if (kinds.includes('smid') && kinds.includes('app_auth_token')) {
    schema = schema.xor('smid', 'app_auth_token').messages({
      'object.missing': 'one of smid or app_auth_token is required',
      'object.xor': 'give either smid or app_auth_token, not both',
    });
  }
  return schema;
}

/** Every channel's account fields at once, for the OpenAPI document (each channel takes its own). */
export const attachAnySchema = Joi.object({
  sub_mchid: Joi.string().description('wechatpay: the sub-merchant number.'),
  smid: Joi.string().description('alipay: a 直付通 secondary merchant (2088…).'),
  app_auth_token: Joi.string().description('alipay: the token of a merchant that authorised this app.'),
  sub_merchant_no: Joi.string().description('sandbox: the sub-merchant number.'),
});

/** The claim a valid attach body makes. */
export function claimOf(body: Record<string, string | undefined>): AccountClaim {
  if (body.sub_mchid !== undefined) return { kind: 'sub_mchid', subMchid: body.sub_mchid };
  if (body.smid !== undefined) return { kind: 'smid', smid: body.smid };
  if (body.app_auth_token !== undefined) return { kind: 'app_auth_token', appAuthToken: body.app_auth_token };
  return { kind: 'sub_merchant_no', subMerchantNo: body.sub_merchant_no ?? '' };
}

/** The number a claim names, as the account's row keeps it (a token has none until confirmed). */
export function claimedNumber(claim: AccountClaim): string | null {
  switch (claim.kind) {
    case 'sub_mchid':
      return claim.subMchid;
    case 'smid':
      return claim.smid;
    case 'sub_merchant_no':
      return claim.subMerchantNo;
    case 'app_auth_token':
      return null;
  }
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
  appAuthToken: string | null;
  tokenExpiresAt: Date | null;
  status: AccountStatus;
  source: AccountSource;
  activatedAt: Date;
  detachedAt: Date | null;
  updatedAt: Date;
}

/** The account as the API shows it (GET …/channel-accounts, the merchant's `channel_accounts`). */
export function accountView(a: ChannelAccount) {
  return {
    channel_code: a.channelCode,
    ...(a.kind === 'sub_mchid' ? { sub_mchid: a.accountNo } : {}),
    ...(a.kind === 'smid' ? { smid: a.accountNo } : {}),
    ...(a.kind === 'app_auth_token'
      ? { app_auth_token: maskBankAccount(a.appAuthToken), user_id: a.accountNo }
      : {}),
    ...(a.kind === 'sub_merchant_no' ? { sub_merchant_no: a.accountNo } : {}),
    status: a.status,
    source: a.source,
    ...(a.kind === 'app_auth_token' ? { token_expires_at: a.tokenExpiresAt?.toISOString() ?? null } : {}),
    activated_at: a.activatedAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

/** Whether an attach names the account already attached (then it changes nothing). */
export function sameAccount(a: ChannelAccount, claim: AccountClaim): boolean {
  if (a.kind !== claim.kind) return false;
  if (claim.kind === 'app_auth_token') return a.appAuthToken === claim.appAuthToken;
  return a.accountNo === claimedNumber(claim);
}
