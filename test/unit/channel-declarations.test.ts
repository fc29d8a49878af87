/**
 * A channel declares its merchants' account kinds and its payee kinds in its descriptor; the
 * attach body's schema and messages, the claim, the account's view, the OpenAPI document and the
 * transfer body's payee types are all made from those declarations, never from a list of their
 * own.
 */
import { buildOpenApiDocument } from '../../src/api/openapi/document';
import { CHANNEL_ACCOUNTS, CHANNEL_CODES, PAYEE_KINDS, holdsToken } from '../../src/channels/registry';
import {
  ACCOUNT_KINDS,
  accountView,
  attachSchema,
  claimOf,
  type ChannelAccount,
} from '../../src/modules/merchants';
import { transferSchema } from '../../src/modules/transfers/schemas';

type Json = Record<string, unknown>;
const document = buildOpenApiDocument({ version: '0.0.0' }) as {
  components: { schemas: Record<string, Json> };
};
const schemas = document.components.schemas;

const account = (channelCode: string, kind: string, accountNo: string | null, token: string | null) =>
  ({
    id: 1,
    appId: 'app_1',
    merchantId: 'm-1',
    channelCode,
    kind,
    accountNo,
    token,
    tokenExpiresAt: null,
    status: 'active',
    source: 'attached',
    activatedAt: new Date('2026-12-01T00:00:00.000Z'),
    detachedAt: null,
    updatedAt: new Date('2026-12-01T00:00:00.000Z'),
  }) satisfies ChannelAccount;

test('when the channels declare their accounts, then the merchants module takes exactly those kinds, channel by channel', () => {
  expect(ACCOUNT_KINDS).toEqual(
    Object.fromEntries(CHANNEL_ACCOUNTS.map((c) => [c.code, c.accounts.kinds.map((k) => k.kind)])),
  );
  // The real channels first, the sandbox (their stand-in) last.
  expect(Object.keys(ACCOUNT_KINDS).slice(-1)).toEqual(['sandbox']);
  expect(ACCOUNT_KINDS.alipay).toEqual(['smid', 'app_auth_token']);
});

test('when an attach body gives a declared field of the declared shape, then it is the claim; of another shape, then the message is the declared one', () => {
  for (const { code, accounts } of CHANNEL_ACCOUNTS) {
    for (const kind of accounts.kinds) {
      const good = { [kind.kind]: kind.example };
      const { error, value } = attachSchema(code).validate(good);
      expect({ code, kind: kind.kind, error: error?.message }).toEqual({
        code,
        kind: kind.kind,
        error: undefined,
      });
      expect(claimOf(code, value as Record<string, string>)).toEqual({
        kind: kind.kind,
        value: kind.example,
      });
      expect(kind.pattern.test(kind.example)).toBe(true);

      const bad = attachSchema(code).validate({ [kind.kind]: 'not/a value' }).error?.message;
      expect({ code, kind: kind.kind, bad }).toEqual({ code, kind: kind.kind, bad: kind.patternMessage });
    }
  }
});

test("when an attach body names another channel's field, or two fields, or none, then it is refused naming them", () => {
  expect(
    attachSchema('wechatpay').validate({ sub_mchid: '1900000109', smid: '2088102146225135' }).error?.message,
  ).toBe('"smid" is not a field of a wechatpay account');
  expect(
    attachSchema('alipay').validate({ smid: '2088102146225135', app_auth_token: '202611BBc1d2e3f4g5h6' })
      .error?.message,
  ).toBe('give either smid or app_auth_token, not both');
  expect(attachSchema('alipay').validate({}).error?.message).toBe(
    'one of smid or app_auth_token is required',
  );
  expect(attachSchema('sandbox').validate({}).error?.message).toBe('"sub_merchant_no" is required');
});

test('when an account is shown, then a number kind shows its number and a token kind is masked beside the number it is for', () => {
  for (const { code, accounts } of CHANNEL_ACCOUNTS) {
    for (const kind of accounts.kinds) {
      const token = holdsToken(code, kind.kind);
      const view = accountView(
        account(code, kind.kind, token ? '2088000000000001' : kind.example, token ? 'abcdefgh1234' : null),
      );
      expect(view).toMatchObject(
        token
          ? {
              channel_code: code,
              [kind.kind]: '********1234',
              user_id: '2088000000000001',
              token_expires_at: null,
            }
          : { channel_code: code, [kind.kind]: kind.example },
      );
      if (!token) expect(view).not.toHaveProperty('token_expires_at');
    }
  }
});

test('when the OpenAPI document is built, then its channel accounts and payee types are the declared ones', () => {
  const channelAccount = schemas.ChannelAccount as { properties: Record<string, Json> };
  expect(channelAccount.properties.channel_code!.enum).toEqual(CHANNEL_ACCOUNTS.map((c) => c.code));
  for (const { accounts } of CHANNEL_ACCOUNTS) {
    for (const kind of accounts.kinds) expect(channelAccount.properties).toHaveProperty(kind.kind);
  }
  const attach = schemas.AttachChannelAccountRequest as { properties: Record<string, Json> };
  expect(Object.keys(attach.properties).sort()).toEqual(
    [...new Set(CHANNEL_ACCOUNTS.flatMap((c) => c.accounts.kinds.map((k) => k.kind)))].sort(),
  );
  const transfer = schemas.Transfer as { properties: { payee: { properties: { type: Json } } } };
  expect(transfer.properties.payee.properties.type.enum).toEqual(PAYEE_KINDS.map((p) => p.type));
  expect(PAYEE_KINDS.map((p) => p.type)).toEqual(
    expect.arrayContaining(['openid', 'alipay_user_id', 'alipay_logon_id']),
  );
  expect(CHANNEL_CODES.slice(-1)).toEqual(['sandbox']);
});

test('when a transfer names a payee type no channel declares, then the body is refused naming payee.type', () => {
  const body = {
    merchant_transfer_no: 'T-1',
    channel_code: 'sandbox',
    amount: 100,
    payee: { type: 'bank_card', account: '6222' },
    remark: 'x',
    notify_url: 'https://merchant.example/hook',
  };
  expect(transferSchema.validate(body).error?.message).toBe(
    `"payee.type" must be one of [${PAYEE_KINDS.map((p) => p.type).join(', ')}]`,
  );
  expect(
    transferSchema.validate({ ...body, payee: { type: 'openid', account: 'o1' } }).error,
  ).toBeUndefined();
});
