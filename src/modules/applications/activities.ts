import { ApplicationFailure } from '@temporalio/activity';
import { ChannelError, toActivityFailure } from '../../channels/errors';
import type { ApplicationState, OnboardingPort } from '../../channels/ports';
import { ApplicationRepository, type ApplicationRow } from './repository';
import { applicationView } from './view';
import { ChannelAccountRepository, MerchantRepository, applicantOf, onboardedClaim } from '../merchants';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Logger } from '../../platform/logger';
import type { NotificationPublisher } from '../notifications';
import { pollAttempt, type PollOutcome, type PollPlan } from '../../platform/polling';

/** Whether the channel's answer says something the application's record does not yet hold. */
function differs(a: ApplicationState, b: ApplicationState | null): boolean {
  return (
    !b ||
    a.status !== b.status ||
    a.channelApplicationNo !== b.channelApplicationNo ||
    a.subMerchantNo !== b.subMerchantNo ||
    a.signUrl !== b.signUrl ||
    a.rejectReason !== b.rejectReason ||
    JSON.stringify(a.detail ?? {}) !== JSON.stringify(b.detail ?? {})
  );
}

/**
 * The merchant follows its application: created/rejected → auditing → active at the channel
 * (with its sub_merchant_no) or rejected. An active merchant applying at another channel stays
 * active; only an open audit is rejected.
 */
async function followApplication(
  merchants: MerchantRepository,
  accounts: ChannelAccountRepository,
  a: ApplicationRow,
): Promise<void> {
  if (a.status === 'finished' && a.sub_merchant_no !== null) {
    // The channel issued the account: it is the merchant's account there (SPEC §5.8).
    await accounts.attach({
      appId: a.app_id,
      merchantId: a.merchant_id,
      channelCode: a.channel_code,
      claim: onboardedClaim(a.channel_code, a.sub_merchant_no),
      confirmed: { accountNo: a.sub_merchant_no },
      source: 'onboarding',
    });
  } else if (a.status === 'finished') {
    await merchants.markActive(a.app_id, a.merchant_id, a.channel_code, a.sub_merchant_no);
  } else if (a.status === 'rejected') {
    await merchants.markRejected(a.app_id, a.merchant_id);
  } else if (a.status !== 'canceled') {
    await merchants.markAuditing(a.app_id, a.merchant_id);
  }
}

/** What the applications module's activities need. */
export interface ApplicationActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  /** Open the applicant data sealed at rest (SPEC §7). */
  payloadKeys: Keyring;
  /** How merchant.application.updated reaches the merchant. */
  publisher: Pick<NotificationPublisher, 'publish'>;
}

/** The activities of the applications module, under the names the worker registers them by. */
export type ApplicationActivities = ReturnType<typeof createApplicationActivities>;

export function createApplicationActivities(deps: ApplicationActivityDeps) {
  const repo = new ApplicationRepository(deps.db, deps.payloadKeys);
  const merchants = new MerchantRepository(deps.db, deps.payloadKeys);
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);

  async function load(applicationId: string) {
    const a = await repo.find(applicationId);
    if (!a)
      throw ApplicationFailure.nonRetryable(`application ${applicationId} does not exist`, 'internal_system');
    return a;
  }

  /** Onboarding is done with the channel's default account, the one sub-merchants belong to. */
  function onboarding(code: string): OnboardingPort {
    const found = deps.channels.get(code)?.onboarding;
    if (!found) throw new ChannelError('not_supported', `channel ${code} does not support onboarding`);
    return found;
  }

  return {
    /** Submits the application (idempotent on application_id at the channel). */
    async submitMerchantApplication(input: { applicationId: string }): Promise<ApplicationState> {
      const a = await load(input.applicationId);
      const merchant = await merchants.findWithPersonalData(a.app_id, a.merchant_id);
      if (!merchant) throw ApplicationFailure.nonRetryable('merchant not found', 'order_not_found');
      const submitData = await repo.submitDataOf(a.application_id);
      try {
        return await onboarding(a.channel_code).submit(
          {},
          {
            applicationId: a.application_id,
            merchant: applicantOf(merchant),
            submitData: submitData ?? {},
          },
        );
      } catch (err) {
        throw toActivityFailure(err, 'onboarding');
      }
    },

    /**
     * Follows the channel's audit (SPEC §5.7): one attempt per gap, ended by an answer that
     * differs from the one recorded (`known`) or by the audit window's end, after a last query.
     */
    async awaitApplicationChange(
      input: { applicationId: string; channelCode: string; known: ApplicationState | null } & PollPlan,
    ): Promise<PollOutcome<ApplicationState>> {
      return pollAttempt(
        input,
        async () => {
          const next = await onboarding(input.channelCode).query({}, input.applicationId);
          return differs(next, input.known) ? next : undefined;
        },
        (err) =>
          deps.logger.warn('audit query failed; will poll again', {
            application_id: input.applicationId,
            error: err instanceof Error ? err.message : String(err),
          }),
      );
    },

    /**
     * Records the channel's answer and moves the merchant with it; when something changed and
     * the application has a notify_url, publishes merchant.application.updated (change `seq`).
     */
    async recordApplicationState(input: {
      applicationId: string;
      state: ApplicationState;
      seq: number;
    }): Promise<boolean> {
      // The merchant moves first, so that whoever reads the application in its new state finds
      // the merchant already moved with it (a finished application, an active merchant). Both
      // writes are idempotent: a retry after the second failed repeats the first harmlessly.
      const before = await load(input.applicationId);
      await followApplication(merchants, accounts, {
        ...before,
        status: input.state.status,
        sub_merchant_no: input.state.subMerchantNo,
      });
      const changed = await repo.recordState(input.applicationId, input.state);
      const a = await load(input.applicationId);
      if ((changed || input.seq === 1) && a.notify_url) {
        await deps.publisher.publish({
          appId: a.app_id,
          type: 'merchant.application.updated',
          eventKey: `merchant.application.updated:${a.application_id}:${input.seq}`,
          url: a.notify_url,
          data: applicationView(a),
          occurredAt: new Date().toISOString(),
          applicationId: a.application_id,
        });
      }
      return changed;
    },

    /** Ends an application the channel refused or never decided. */
    async cancelMerchantApplication(input: { applicationId: string; reason: string }): Promise<void> {
      await repo.recordState(input.applicationId, {
        status: 'canceled',
        channelApplicationNo: (await load(input.applicationId)).channel_application_no,
        subMerchantNo: null,
        signUrl: null,
        rejectReason: input.reason,
        detail: {},
      });
    },
  };
}
