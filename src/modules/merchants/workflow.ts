import {
  ActivityFailure,
  continueAsNew,
  proxyActivities,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
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
 * waits until shortly before it expires, refreshes it with its refresh token, and goes on (a
 * channel that does not answer is asked again after a backoff). When the channel refuses the
 * refresh, or the token has no refresh token, the token serves until it runs out; then the account
 * is `expired` and the merchant is told (merchant.channel_account.updated). Ends when the account is detached or
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
  let failures = 0;
  for (let refreshed = 0; refreshed < REFRESHES_PER_RUN;) {
    const plan = await db.channelTokenPlan({ accountId: input.accountId, failures });
    if (plan.kind === 'done') return plan.reason;
    await sleep(plan.delayMs);
    if (plan.kind === 'expire') {
      const outcome = await db.expireChannelToken({ accountId: input.accountId });
      if (outcome === 'expired') {
        upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: 'expired' }]);
        await announce();
      }
      return outcome;
    }
    let outcome;
    try {
      outcome = await channel.refreshChannelToken({ accountId: input.accountId });
    } catch (err) {
      // No answer, however often asked: asked again after a backoff, until the token runs out.
      if (!(err instanceof ActivityFailure)) throw err;
      failures += 1;
      continue;
    }
    failures = 0;
    if (outcome === 'detached') return outcome;
    // Refreshed: on to the next. Refused: the plan now waits for the token's end.
    if (outcome === 'refreshed') refreshed += 1;
  }
  return continueAsNew<typeof channelTokenWorkflow>({ ...input, announce: false });
}
