import { AppError } from '../../platform/errors';
import { ChannelError } from '../../channels/errors';
import type { AccountClaim, ConfirmedAccount } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import { claimedNumber, sameAccount, type AccountSource, type ChannelAccount } from './accounts';
import { AccountOfAnotherAppError, type ChannelAccountRepository } from './account-repository';

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
  if (!channel.accounts) return { accountNo: claimedNumber(claim) };
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
