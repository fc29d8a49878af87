import { AppError } from '../../platform/errors';
import { ChannelError } from '../../channels/errors';
import type { AccountClaim, ConfirmedAccount } from '../../channels/ports';
import { holdsToken, type ChannelRegistry } from '../../channels/registry';
import { claimedNumber, sameAccount, type AccountSource, type ChannelAccount } from './accounts';
import { AccountOfAnotherAppError, type ChannelAccountRepository } from './account-repository';
import type { Logger } from '../../platform/logger';
import { followToken, type AuthorizationDeps } from './authorization';

export interface AttachDeps {
  channels: ChannelRegistry;
  accounts: ChannelAccountRepository;
}

/**
 * What the channel says of an account before it is saved (SPEC §5.8): refused → `400
 * invalid_param` with the channel's reason; no answer → `502 channel_timeout`, nothing saved. A
 * channel that cannot confirm accounts takes the account as given.
 */
export async function confirmAccount(
  channels: ChannelRegistry,
  channelCode: string,
  claim: AccountClaim,
): Promise<ConfirmedAccount> {
  const channel = channels.get(channelCode);
  if (!channel) throw new AppError('invalid_param', `channel ${channelCode} is not configured`);
  if (!channel.accounts) return { accountNo: claimedNumber(channelCode, claim) };
  try {
    return await channel.accounts.confirm({}, claim);
  } catch (err) {
    if (err instanceof ChannelError && err.kind === 'refused') {
      throw new AppError('invalid_param', `channel ${channelCode} refused the account: ${err.message}`);
    }
    const why = err instanceof ChannelError ? err.message : 'no answer';
    throw new AppError(
      'channel_timeout',
      `channel ${channelCode} could not confirm the account (${why}); nothing was saved, send it again`,
    );
  }
}

/**
 * Confirms an account at its channel, then attaches it (replacing the one attached there). The
 * account already attached is answered as it is, without asking the channel again. An account
 * of another app's merchant is `400 invalid_param`.
 */
export async function attachAccount(
  deps: AttachDeps,
  input: {
    appId: string;
    merchantId: string;
    channelCode: string;
    claim: AccountClaim;
    source: AccountSource;
  },
): Promise<{ account: ChannelAccount; changed: boolean }> {
  const current = await deps.accounts.attachedAt(input.appId, input.merchantId, input.channelCode);
  if (current && current.status === 'active' && sameAccount(current, input.claim)) {
    return { account: current, changed: false };
  }
  const confirmed = await confirmAccount(deps.channels, input.channelCode, input.claim);
  try {
    return await deps.accounts.attach({ ...input, confirmed });
  } catch (err) {
    if (err instanceof AccountOfAnotherAppError) throw new AppError('invalid_param', err.message);
    throw err;
  }
}

/**
 * A merchant's account attached as `PUT /api/v1/merchant/{id}/channel-accounts/{channel_code}`
 * attaches it (SPEC §5.8), for the API and the operator console alike: confirmed at its channel
 * (attachAccount), and an authorised token that changed followed by its workflow, which marks the
 * account expired when the token runs out. Throws NoSuchMerchantError for a merchant that is gone.
 */
export async function attachMerchantAccount(
  deps: AttachDeps & Pick<AuthorizationDeps, 'client' | 'taskQueue'>,
  input: { appId: string; merchantId: string; channelCode: string; claim: AccountClaim },
  log: Logger,
): Promise<{ account: ChannelAccount; changed: boolean }> {
  const attached = await attachAccount(deps, { ...input, source: 'attached' });
  log.info('channel account attached', {
    merchant_id: input.merchantId,
    channel_code: input.channelCode,
    kind: input.claim.kind,
  });
  if (attached.changed && holdsToken(input.channelCode, attached.account.kind)) {
    await followToken(deps, attached.account, null).catch((err: unknown) =>
      log.error('could not start the channel token workflow', {
        merchant_id: input.merchantId,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
  }
  return attached;
}
