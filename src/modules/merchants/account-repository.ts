// Longer than 400 lines: the accounts' tables (accounts, authorisations under way) have one
// repository, the only code that touches them, with the sealing of their tokens.
import { QueryTypes, type Transaction } from 'sequelize';
import type { AccountClaim, AccountKind, AuthorizedToken, ConfirmedAccount } from '../../channels/ports';
import { channelDescriptor, holdsToken } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import {
  SEALED_FIELD_PREFIX,
  SealedColumn,
  legacyText,
  sealedPrefix,
} from '../../platform/crypto/sealed-column';
import {
  claimedNumber,
  sameAccount,
  type AccountSource,
  type AccountStatus,
  type ChannelAccount,
} from './accounts';

/** The account is attached to a merchant of another app: one app never acts for another's. */
export class AccountOfAnotherAppError extends Error {
  override name = 'AccountOfAnotherAppError';
  constructor(channelCode: string) {
    super(`this account is attached to a merchant of another app at channel ${channelCode}`);
  }
}

/** The merchant has another account at the channel, which an authorisation does not replace. */
export class AccountConflictError extends Error {
  override name = 'AccountConflictError';
  constructor(readonly attachedNo: string | null) {
    super('the merchant has another account at this channel');
  }
}

/** The merchant an account is attached to does not exist (for this app). */
export class NoSuchMerchantError extends Error {
  override name = 'NoSuchMerchantError';
  constructor(readonly merchantId: string) {
    super('merchant not found');
  }
}

interface AccountRow {
  id: string; // BIGINT comes back as a string
  app_id: string;
  merchant_id: string;
  channel_code: string;
  kind: AccountKind;
  account_no: string | null;
  app_auth_token: string | null;
  token_expires_at: Date | null;
  status: AccountStatus;
  source: AccountSource;
  activated_at: Date;
  detached_at: Date | null;
  updated_at: Date;
}

const COLUMNS = `id, app_id, merchant_id, channel_code, kind, account_no, app_auth_token, token_expires_at,
  status, source, activated_at, detached_at, updated_at`;

/** A row holding a token or refresh token not sealed as `:prefix` says (see sealLegacy). */
const NEEDS_SEALING = `((app_auth_token IS NOT NULL AND NOT starts_with(app_auth_token, :prefix))
  OR (refresh_token IS NOT NULL AND NOT starts_with(refresh_token, :prefix)))`;

/** Binds a sealed token to its merchant and channel: it does not open in another's row. */
const tokenKey = (r: { app_id: string; merchant_id: string; channel_code: string }) =>
  `${r.app_id}:${r.merchant_id}:${r.channel_code}`;

/** The account an application that finished at a channel gives its merchant: the kind its channel declares. */
export function onboardedClaim(channelCode: string, subMerchantNo: string): AccountClaim {
  const kind = channelDescriptor(channelCode)?.accounts?.onboarded;
  if (!kind) throw new Error(`channel ${channelCode} declares no account that onboarding gives`);
  return { kind, value: subMerchantNo };
}

/**
 * Merchants' accounts at the channels (SPEC §5.8), and the merchant's `status`, `channel_code`
 * and `sub_merchant_no` that follow them. A merchant has at most one attached account per
 * channel; a detached one keeps its row, because the orders made with it still use it. Every
 * change of a merchant's accounts holds its merchant row's lock, so that two attaches of one
 * merchant are made one after the other. An Alipay app_auth_token is sealed with the payload
 * keys (a row migrated from before holds it in plain text until `durapay keys reseal`).
 */
export class ChannelAccountRepository {
  private readonly token: SealedColumn<string>;
  private readonly refreshToken: SealedColumn<string>;

  constructor(
    private readonly db: Database,
    private readonly keyring: Keyring,
  ) {
    this.token = new SealedColumn(keyring, 'merchant_channel_accounts.app_auth_token', legacyText);
    this.refreshToken = new SealedColumn(keyring, 'merchant_channel_accounts.refresh_token', legacyText);
  }

  private accountOf(r: AccountRow): ChannelAccount {
    return {
      id: Number(r.id),
      appId: r.app_id,
      merchantId: r.merchant_id,
      channelCode: r.channel_code,
      kind: r.kind,
      accountNo: r.account_no,
      token: this.token.open(r.app_auth_token, tokenKey(r)),
      tokenExpiresAt: r.token_expires_at,
      // A token past its end is expired, whether or not a workflow has said so yet.
      status:
        r.status === 'active' && r.token_expires_at && r.token_expires_at.getTime() <= Date.now()
          ? 'expired'
          : r.status,
      source: r.source,
      activatedAt: r.activated_at,
      detachedAt: r.detached_at,
      updatedAt: r.updated_at,
    };
  }

  private async rows(sql: string, replacements: Record<string, unknown>, transaction?: Transaction) {
    const rows = await this.db.sequelize.query<AccountRow>(sql, {
      replacements,
      type: QueryTypes.SELECT,
      ...(transaction ? { transaction } : {}),
    });
    return rows.map((r) => this.accountOf(r));
  }

  /** The merchant's attached accounts, the most recently activated first. */
  async attached(appId: string, merchantId: string): Promise<ChannelAccount[]> {
    return this.rows(
      `SELECT ${COLUMNS} FROM merchant_channel_accounts
        WHERE app_id = :appId AND merchant_id = :merchantId AND detached_at IS NULL
        ORDER BY activated_at DESC, id DESC`,
      { appId, merchantId },
    );
  }

  /** The attached accounts of many merchants of one app, by merchant id. */
  async attachedOf(appId: string, merchantIds: readonly string[]): Promise<Map<string, ChannelAccount[]>> {
    const byMerchant = new Map<string, ChannelAccount[]>();
    if (merchantIds.length === 0) return byMerchant;
    const accounts = await this.rows(
      `SELECT ${COLUMNS} FROM merchant_channel_accounts
        WHERE app_id = :appId AND merchant_id IN (:merchantIds) AND detached_at IS NULL
        ORDER BY activated_at DESC, id DESC`,
      { appId, merchantIds: [...new Set(merchantIds)] },
    );
    for (const a of accounts) byMerchant.set(a.merchantId, [...(byMerchant.get(a.merchantId) ?? []), a]);
    return byMerchant;
  }

  /** The merchant's attached account at a channel. */
  async attachedAt(appId: string, merchantId: string, channelCode: string): Promise<ChannelAccount | null> {
    const [a] = await this.rows(
      `SELECT ${COLUMNS} FROM merchant_channel_accounts
        WHERE app_id = :appId AND merchant_id = :merchantId AND channel_code = :channelCode
          AND detached_at IS NULL`,
      { appId, merchantId, channelCode },
    );
    return a ?? null;
  }

  /** An account by its id, attached or not (an order's account). */
  async byId(id: number): Promise<ChannelAccount | null> {
    const [a] = await this.rows(`SELECT ${COLUMNS} FROM merchant_channel_accounts WHERE id = :id`, { id });
    return a ?? null;
  }

  /** Locks the merchant's row for a change of its accounts; throws NoSuchMerchantError. */
  private async lockMerchant(appId: string, merchantId: string, transaction: Transaction): Promise<void> {
    const found = await this.db.sequelize.query(
      'SELECT 1 FROM merchants WHERE app_id = :appId AND merchant_id = :merchantId FOR UPDATE',
      { replacements: { appId, merchantId }, type: QueryTypes.SELECT, transaction },
    );
    if (found.length === 0) throw new NoSuchMerchantError(merchantId);
  }

  /**
   * The merchant's `channel_code` and `sub_merchant_no` show its most recently activated account
   * (SPEC §5.2); with none left, an active merchant is `created` again.
   */
  private async follow(appId: string, merchantId: string, transaction: Transaction): Promise<void> {
    await this.db.sequelize.query(
      `WITH latest AS (
         SELECT channel_code, account_no FROM merchant_channel_accounts
          WHERE app_id = :appId AND merchant_id = :merchantId AND detached_at IS NULL
          ORDER BY activated_at DESC, id DESC LIMIT 1),
       next AS (
         SELECT m.app_id, m.merchant_id, l.channel_code, l.account_no,
                CASE WHEN l.channel_code IS NOT NULL THEN 'active'
                     WHEN m.status = 'active' THEN 'created' ELSE m.status END AS status
           FROM merchants m LEFT JOIN latest l ON true
          WHERE m.app_id = :appId AND m.merchant_id = :merchantId)
       UPDATE merchants m
          SET channel_code = n.channel_code, sub_merchant_no = n.account_no, status = n.status,
              updated_at = now()
         FROM next n
        WHERE m.app_id = n.app_id AND m.merchant_id = n.merchant_id
          AND (m.channel_code IS DISTINCT FROM n.channel_code
               OR m.sub_merchant_no IS DISTINCT FROM n.account_no OR m.status IS DISTINCT FROM n.status)`,
      { replacements: { appId, merchantId }, transaction },
    );
  }

  /**
   * Attaches an account the channel confirmed (or that came from onboarding), replacing the one
   * attached at that channel; the same account again changes nothing. Answers the attached
   * account and whether anything changed.
   */
  async attach(input: {
    appId: string;
    merchantId: string;
    channelCode: string;
    claim: AccountClaim;
    confirmed: ConfirmedAccount;
    source: AccountSource;
    /** An authorisation's refresh token (Alipay 第三方应用授权), sealed like the token. */
    refresh?: { refreshToken: string; refreshExpiresAt: Date | null };
    /**
     * Replace only an account of the same number (an authorisation renewed by the same Alipay
     * user): another account attached at the channel throws AccountConflictError.
     */
    sameNumberOnly?: boolean;
  }): Promise<{ account: ChannelAccount; changed: boolean }> {
    const { appId, merchantId, channelCode, claim } = input;
    return this.db.sequelize.transaction(async (transaction) => {
      await this.lockMerchant(appId, merchantId, transaction);
      const [current] = await this.rows(
        `SELECT ${COLUMNS} FROM merchant_channel_accounts
          WHERE app_id = :appId AND merchant_id = :merchantId AND channel_code = :channelCode
            AND detached_at IS NULL`,
        { appId, merchantId, channelCode },
        transaction,
      );
      if (current && sameAccount(current, claim) && current.status === 'active') {
        return { account: current, changed: false };
      }
      // One account, one app: another app's merchant with it attached is refused. The number is
      // locked for the transaction, so that two apps attaching it at once are one after the other.
      const accountNo = input.confirmed.accountNo ?? claimedNumber(channelCode, claim);
      if (accountNo !== null) {
        await this.db.sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:key))', {
          replacements: { key: `channel-account:${channelCode}:${accountNo}` },
          transaction,
        });
        const taken = await this.db.sequelize.query(
          `SELECT 1 FROM merchant_channel_accounts
            WHERE channel_code = :channelCode AND account_no = :accountNo AND app_id <> :appId
              AND detached_at IS NULL LIMIT 1`,
          { replacements: { channelCode, accountNo, appId }, type: QueryTypes.SELECT, transaction },
        );
        if (taken.length > 0) throw new AccountOfAnotherAppError(channelCode);
      }
      if (current && input.sameNumberOnly && current.accountNo !== accountNo) {
        throw new AccountConflictError(current.accountNo);
      }
      if (current) {
        await this.db.sequelize.query(
          'UPDATE merchant_channel_accounts SET detached_at = now(), updated_at = now() WHERE id = :id',
          { replacements: { id: current.id }, transaction },
        );
      }
      const key = tokenKey({ app_id: appId, merchant_id: merchantId, channel_code: channelCode });
      const [account] = await this.rows(
        `INSERT INTO merchant_channel_accounts
           (app_id, merchant_id, channel_code, kind, account_no, app_auth_token, token_expires_at,
            refresh_token, refresh_expires_at, status, source, activated_at, created_at, updated_at)
         VALUES (:appId, :merchantId, :channelCode, :kind, :accountNo, :token, :expiresAt,
            :refreshToken, :refreshExpiresAt, 'active', :source, now(), now(), now())
         RETURNING ${COLUMNS}`,
        {
          appId,
          merchantId,
          channelCode,
          kind: claim.kind,
          accountNo,
          token: holdsToken(channelCode, claim.kind) ? this.token.seal(claim.value, key) : null,
          expiresAt: input.confirmed.tokenExpiresAt ?? null,
          refreshToken: input.refresh ? this.refreshToken.seal(input.refresh.refreshToken, key) : null,
          refreshExpiresAt: input.refresh?.refreshExpiresAt ?? null,
          source: input.source,
        },
        transaction,
      );
      await this.follow(appId, merchantId, transaction);
      return { account: account!, changed: true };
    });
  }

  /** Detaches the merchant's account at a channel; answers it, or null when none was attached. */
  async detach(appId: string, merchantId: string, channelCode: string): Promise<ChannelAccount | null> {
    return this.db.sequelize.transaction(async (transaction) => {
      await this.lockMerchant(appId, merchantId, transaction);
      const [detached] = await this.rows(
        `UPDATE merchant_channel_accounts SET detached_at = now(), updated_at = now()
          WHERE app_id = :appId AND merchant_id = :merchantId AND channel_code = :channelCode
            AND detached_at IS NULL
          RETURNING ${COLUMNS}`,
        { appId, merchantId, channelCode },
        transaction,
      );
      if (!detached) return null;
      await this.follow(appId, merchantId, transaction);
      return detached;
    });
  }

  /** What the token workflow needs of an account: its state, without opening its tokens. */
  async tokenState(id: number): Promise<{
    channelCode: string;
    status: AccountStatus;
    detachedAt: Date | null;
    tokenExpiresAt: Date | null;
    updatedAt: Date;
    hasRefreshToken: boolean;
  } | null> {
    const [r] = await this.db.sequelize.query<{
      channel_code: string;
      status: AccountStatus;
      detached_at: Date | null;
      token_expires_at: Date | null;
      updated_at: Date;
      has_refresh: boolean;
    }>(
      `SELECT channel_code, status, detached_at, token_expires_at, updated_at,
              refresh_token IS NOT NULL AS has_refresh
         FROM merchant_channel_accounts WHERE id = :id`,
      { replacements: { id }, type: QueryTypes.SELECT },
    );
    return r
      ? {
          channelCode: r.channel_code,
          status: r.status,
          detachedAt: r.detached_at,
          tokenExpiresAt: r.token_expires_at,
          updatedAt: r.updated_at,
          hasRefreshToken: r.has_refresh,
        }
      : null;
  }

  /** The account's refresh token, opened; null when it has none. */
  async refreshTokenOf(id: number): Promise<string | null> {
    const [r] = await this.db.sequelize.query<{
      app_id: string;
      merchant_id: string;
      channel_code: string;
      refresh_token: string | null;
    }>(
      'SELECT app_id, merchant_id, channel_code, refresh_token FROM merchant_channel_accounts WHERE id = :id',
      {
        replacements: { id },
        type: QueryTypes.SELECT,
      },
    );
    return r ? this.refreshToken.open(r.refresh_token, tokenKey(r)) : null;
  }

  /** Keeps a refreshed token on an attached, active account; false when it is no longer either. */
  async tokenRefreshed(id: number, token: AuthorizedToken): Promise<boolean> {
    const [r] = await this.db.sequelize.query<{ app_id: string; merchant_id: string; channel_code: string }>(
      'SELECT app_id, merchant_id, channel_code FROM merchant_channel_accounts WHERE id = :id',
      { replacements: { id }, type: QueryTypes.SELECT },
    );
    if (!r) return false;
    const key = tokenKey(r);
    const updated = await this.db.sequelize.query(
      `UPDATE merchant_channel_accounts
          SET app_auth_token = :token, refresh_token = :refreshToken, token_expires_at = :expiresAt,
              refresh_expires_at = :refreshExpiresAt, updated_at = now()
        WHERE id = :id AND detached_at IS NULL AND status = 'active'
        RETURNING id`,
      {
        replacements: {
          id,
          token: this.token.seal(token.appAuthToken, key),
          refreshToken: this.refreshToken.seal(token.refreshToken, key),
          expiresAt: token.expiresAt,
          refreshExpiresAt: token.refreshExpiresAt,
        },
        type: QueryTypes.SELECT,
      },
    );
    return updated.length > 0;
  }

  /** A refresh token the channel no longer takes: the token serves until it runs out. */
  async dropRefreshToken(id: number): Promise<void> {
    await this.db.sequelize.query(
      'UPDATE merchant_channel_accounts SET refresh_token = NULL, refresh_expires_at = NULL, updated_at = now() WHERE id = :id',
      { replacements: { id } },
    );
  }

  /** A token that ran out (or was never refreshable): `expired`; false when detached already. */
  async markExpired(id: number): Promise<boolean> {
    const updated = await this.db.sequelize.query(
      `UPDATE merchant_channel_accounts SET status = 'expired', updated_at = now()
        WHERE id = :id AND detached_at IS NULL AND status <> 'expired' RETURNING id`,
      { replacements: { id }, type: QueryTypes.SELECT },
    );
    return updated.length > 0;
  }

  /** Records an authorisation under way: its state's hash, bound to the app and merchant. */
  async beginAuthorization(a: {
    stateHash: string;
    appId: string;
    merchantId: string;
    channelCode: string;
    redirectUrl: string | null;
    notifyUrl: string | null;
    expectedUserId: string | null;
    expiresAt: Date;
  }): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO channel_authorizations
         (state_hash, app_id, merchant_id, channel_code, redirect_url, notify_url, expected_user_id,
          created_at, expires_at)
       VALUES (:stateHash, :appId, :merchantId, :channelCode, :redirectUrl, :notifyUrl, :expectedUserId,
          now(), :expiresAt)`,
      { replacements: a },
    );
  }

  /** Takes an authorisation's state once: null when unknown, used already or expired. */
  async consumeAuthorization(stateHash: string): Promise<{
    appId: string;
    merchantId: string;
    channelCode: string;
    redirectUrl: string | null;
    notifyUrl: string | null;
    expectedUserId: string | null;
  } | null> {
    const [r] = await this.db.sequelize.query<{
      app_id: string;
      merchant_id: string;
      channel_code: string;
      redirect_url: string | null;
      notify_url: string | null;
      expected_user_id: string | null;
    }>(
      `UPDATE channel_authorizations SET used_at = now()
        WHERE state_hash = :stateHash AND used_at IS NULL AND expires_at > now()
        RETURNING app_id, merchant_id, channel_code, redirect_url, notify_url, expected_user_id`,
      { replacements: { stateHash }, type: QueryTypes.SELECT },
    );
    return r
      ? {
          appId: r.app_id,
          merchantId: r.merchant_id,
          channelCode: r.channel_code,
          redirectUrl: r.redirect_url,
          notifyUrl: r.notify_url,
          expectedUserId: r.expected_user_id,
        }
      : null;
  }

  /**
   * Seals tokens still in plain text (migrated from merchants' `sub_merchant_no`), and with
   * `rotate` those an older key sealed, with the current key; returns how many. Each row is
   * sealed under its lock, checked again there.
   */
  async sealLegacy(options: { rotate: boolean; batchSize: number }): Promise<number> {
    const prefix = sealedPrefix(this.keyring, options.rotate);
    let after = 0;
    let sealed = 0;
    for (;;) {
      const ids = await this.db.sequelize.query<{ id: string }>(
        `SELECT id FROM merchant_channel_accounts
          WHERE id > :after AND ${NEEDS_SEALING}
          ORDER BY id LIMIT :limit`,
        { replacements: { after, prefix, limit: options.batchSize }, type: QueryTypes.SELECT },
      );
      if (ids.length === 0) return sealed;
      after = Number(ids[ids.length - 1]!.id);
      sealed += await this.db.sequelize.transaction(async (transaction) => {
        const rows = await this.db.sequelize.query<AccountRow & { refresh_token: string | null }>(
          `SELECT ${COLUMNS}, refresh_token FROM merchant_channel_accounts
            WHERE id IN (:ids) AND ${NEEDS_SEALING}
            ORDER BY id FOR UPDATE`,
          { replacements: { ids: ids.map((r) => r.id), prefix }, type: QueryTypes.SELECT, transaction },
        );
        for (const r of rows) {
          const token = this.token.reseal(r.app_auth_token, tokenKey(r), options.rotate);
          const refresh = this.refreshToken.reseal(r.refresh_token, tokenKey(r), options.rotate);
          await this.db.sequelize.query(
            'UPDATE merchant_channel_accounts SET app_auth_token = :token, refresh_token = :refresh WHERE id = :id',
            {
              replacements: {
                token: token === undefined ? r.app_auth_token : token,
                refresh: refresh === undefined ? r.refresh_token : refresh,
                id: r.id,
              },
              transaction,
            },
          );
        }
        return rows.length;
      });
    }
  }
}

/** Channel accounts whose token is sealed with `keyId` (`durapay keys retire` refuses while any are). */
export async function accountsSealedWith(db: Database, keyId: string): Promise<number> {
  const [row] = await db.sequelize.query<{ n: string }>(
    `SELECT count(*) AS n FROM merchant_channel_accounts
      WHERE starts_with(app_auth_token, :prefix) OR starts_with(refresh_token, :prefix)`,
    { replacements: { prefix: `${SEALED_FIELD_PREFIX}${keyId}:` }, type: QueryTypes.SELECT },
  );
  return Number(row?.n ?? 0);
}
