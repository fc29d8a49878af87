import { continueAsNew, proxyActivities, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { MerchantActivities as Activities } from './activities';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import type { ChannelTokenInput } from './messages';

const channel = proxyActivities<Activities>(activityProfiles.channelBackground);
const db = proxyActivities<Activities>(activityProfiles.dbWrite);
const publish = proxyActivities<Activities>(activityProfiles.publish);

/** Refreshes before a new run, so that a run's history stays short (one refresh a year in production). */
const REFRESHES_PER_RUN = 20;

/**
 * Keeps the token of a merchant's authorisation of durapay's app (Alipay 第三方应用授权) fresh:
 * waits until shortly before it expires, refreshes it with its refresh token, and goes on; when
 * the channel refuses the refresh, or a token without one runs out, the account is `expired` and
 * the merchant is told (merchant.channel_account.updated). Ends when the account is detached or
 * replaced. Orders read the token from the account at each call, so a refreshed token is used by
 * the orders made before.
 */
export async function channelTokenWorkflow(input: ChannelTokenInput): Promise<string> {
  upsertSearchAttributes([
    { key: searchAttributes.AppId, value: input.appId },
    { key: searchAttributes.MerchantId, value: input.merchantId },
    { key: searchAttributes.ChannelCode, value: input.channelCode },
    { key: searchAttributes.BizStatus, value: 'active' },
  ]);
  const announce = async () => {
    if (input.notifyUrl) {
      await publish.announceChannelAccount({ accountId: input.accountId, notifyUrl: input.notifyUrl });
    }
  };
  if (input.announce) await announce();
  for (let refreshed = 0; refreshed < REFRESHES_PER_RUN;) {
    const plan = await db.channelTokenPlan({ accountId: input.accountId });
    if (plan.kind === 'done') return plan.reason;
    await sleep(plan.delayMs);
    const outcome =
      plan.kind === 'refresh'
        ? await channel.refreshChannelToken({ accountId: input.accountId })
        : await db.expireChannelToken({ accountId: input.accountId });
    if (outcome === 'refreshed') {
      refreshed += 1;
      continue;
    }
    if (outcome === 'expired') {
      upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: 'expired' }]);
      await announce();
    }
    return outcome;
  }
  return continueAsNew<typeof channelTokenWorkflow>({ ...input, announce: false });
}
