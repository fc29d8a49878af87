import { ChannelError, toActivityFailure } from '../../channels/errors';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Logger } from '../../platform/logger';
import type { NotificationPublisher } from '../notifications';
import { ChannelAccountRepository } from './account-repository';
import { accountView } from './accounts';
import type { TokenPlan } from './messages';

/** How long before a token expires it is refreshed: a week, or half its life when that is shorter. */
export const REFRESH_LEAD_MS = 7 * 24 * 3600_000;

/** What the merchants module's activities need. */
export interface MerchantActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  payloadKeys: Keyring;
  publisher: Pick<NotificationPublisher, 'publish'>;
  /** Scales the waits (tests run faster). */
  timeScale: number;
}

export type MerchantActivities = ReturnType<typeof createMerchantActivities>;

/** The activities of the channel-token workflow (SPEC §5.8). */
export function createMerchantActivities(deps: MerchantActivityDeps) {
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  const scaled = (ms: number) => Math.max(0, Math.round(ms * deps.timeScale));

  return {
    /**
     * When the token is refreshed (or, without a refresh token, when it runs out). After failed
     * refreshes (no answer), again after a backoff: 1, 2, 4 … minutes, at most an hour, never
     * past the token's end.
     */
    async channelTokenPlan(input: { accountId: number; failures?: number }): Promise<TokenPlan> {
      const a = await accounts.tokenState(input.accountId);
      if (!a || a.detachedAt) return { kind: 'done', reason: 'detached' };
      if (a.status === 'expired') return { kind: 'done', reason: 'expired' };
      if (!a.tokenExpiresAt) return { kind: 'done', reason: 'detached' };
      const left = a.tokenExpiresAt.getTime() - Date.now();
      if (!a.hasRefreshToken) return { kind: 'expire', delayMs: scaled(left) };
      const failures = input.failures ?? 0;
      if (failures > 0) {
        const backoff = Math.min(60_000 * 2 ** (failures - 1), 3600_000);
        return backoff < left
          ? { kind: 'refresh', delayMs: scaled(backoff) }
          : { kind: 'expire', delayMs: scaled(left) };
      }
      const life = a.tokenExpiresAt.getTime() - a.updatedAt.getTime();
      return { kind: 'refresh', delayMs: scaled(left - Math.min(REFRESH_LEAD_MS, life / 2)) };
    },

    /**
     * Refreshes the token. A refusal (the refresh token spent or expired) drops the refresh
     * token: the token serves until it runs out, and the account is expired then.
     */
    async refreshChannelToken(input: { accountId: number }): Promise<'refreshed' | 'refused' | 'detached'> {
      const a = await accounts.tokenState(input.accountId);
      if (!a || a.detachedAt) return 'detached';
      const authorization = deps.channels.get(a.channelCode)?.accounts?.authorization;
      const refreshToken = await accounts.refreshTokenOf(input.accountId);
      if (!authorization || !refreshToken) {
        await accounts.dropRefreshToken(input.accountId);
        return 'refused';
      }
      try {
        const token = await authorization.refresh(refreshToken);
        return (await accounts.tokenRefreshed(input.accountId, token)) ? 'refreshed' : 'detached';
      } catch (err) {
        if (err instanceof ChannelError && err.kind === 'refused') {
          deps.logger.warn('channel token refresh refused: the account expires with its token', {
            account_id: input.accountId,
            channel_code: a.channelCode,
            token_expires_at: a.tokenExpiresAt?.toISOString() ?? null,
            error: err.message,
          });
          await accounts.dropRefreshToken(input.accountId);
          return 'refused';
        }
        throw toActivityFailure(err, 'onboarding');
      }
    },

    /** A token without a refresh token ran out: the account is `expired`. */
    async expireChannelToken(input: { accountId: number }): Promise<'expired' | 'detached'> {
      return (await accounts.markExpired(input.accountId)) ? 'expired' : 'detached';
    },

    /** merchant.channel_account.updated, with the account as the API shows it (SPEC §6). */
    async announceChannelAccount(input: { accountId: number; notifyUrl: string }): Promise<void> {
      const a = await accounts.byId(input.accountId);
      if (!a) return;
      await deps.publisher.publish({
        appId: a.appId,
        type: 'merchant.channel_account.updated',
        eventKey: `merchant.channel_account.updated:${a.id}:${a.status}:${a.updatedAt.getTime()}`,
        url: input.notifyUrl,
        data: { merchant_id: a.merchantId, ...accountView(a) },
        occurredAt: a.updatedAt.toISOString(),
      });
    },
  };
}
