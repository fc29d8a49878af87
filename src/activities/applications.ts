import { QueryTypes } from 'sequelize';
import { ApplicationFailure } from '@temporalio/activity';
import { ChannelError, type ApplicationState } from '../channels/types';
import { ApplicationRepository, applicationView } from '../db/repositories/applications';
import type { ActivityDeps } from './index';
import { createNotificationActivities } from './notifications';

function channelFailure(err: unknown): ApplicationFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (
    err instanceof ChannelError &&
    (err.kind === 'refused' || err.kind === 'not_supported' || err.kind === 'invalid_response')
  ) {
    return ApplicationFailure.nonRetryable(message, 'internal_system');
  }
  return ApplicationFailure.retryable(message, 'internal_system');
}

export function createApplicationActivities(deps: ActivityDeps) {
  const repo = new ApplicationRepository(deps.db);
  const { publishNotification } = createNotificationActivities(deps);

  async function load(applicationId: string) {
    const a = await repo.find(applicationId);
    if (!a)
      throw ApplicationFailure.nonRetryable(`application ${applicationId} does not exist`, 'internal_system');
    return a;
  }

  function channel(code: string) {
    const found = deps.channels.get(code);
    if (!found || !found.capabilities.onboarding) {
      throw ApplicationFailure.nonRetryable(`channel ${code} does not support onboarding`, 'internal_system');
    }
    return found;
  }

  return {
    /** Submits the application (idempotent on application_id at the channel). */
    async submitMerchantApplication(input: { applicationId: string }): Promise<ApplicationState> {
      const a = await load(input.applicationId);
      const [merchant] = await deps.db.sequelize.query<{
        merchant_id: string;
        merchant_name: string;
        license_no: string | null;
        legal_person: string | null;
        bank_account: string | null;
      }>(
        `SELECT merchant_id, merchant_name, license_no, legal_person, bank_account
           FROM merchants WHERE app_id = :appId AND merchant_id = :merchantId`,
        { replacements: { appId: a.app_id, merchantId: a.merchant_id }, type: QueryTypes.SELECT },
      );
      if (!merchant) throw ApplicationFailure.nonRetryable('merchant not found', 'order_not_found');
      try {
        return await channel(a.channel_code).submitApplication({
          applicationId: a.application_id,
          merchant: {
            merchantId: merchant.merchant_id,
            merchantName: merchant.merchant_name,
            licenseNo: merchant.license_no,
            legalPerson: merchant.legal_person,
            bankAccount: merchant.bank_account,
          },
          submitData: a.submit_data ?? {},
        });
      } catch (err) {
        throw err instanceof ApplicationFailure ? err : channelFailure(err);
      }
    },

    async queryMerchantApplication(input: {
      applicationId: string;
      channelCode: string;
    }): Promise<ApplicationState> {
      try {
        return await channel(input.channelCode).queryApplication(input.applicationId);
      } catch (err) {
        throw err instanceof ApplicationFailure ? err : channelFailure(err);
      }
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
      const changed = await repo.recordState(input.applicationId, input.state);
      const a = await load(input.applicationId);
      await repo.moveMerchant(a);
      if ((changed || input.seq === 1) && a.notify_url) {
        await publishNotification({
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
