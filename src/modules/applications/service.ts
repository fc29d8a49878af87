import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { scaleDuration } from '../../platform/durations';
import { AppError, INTERNAL_SYSTEM_MESSAGE } from '../../platform/errors';
import { generateApplicationId } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import { MerchantRepository, applicantOf } from '../merchants';
import { AUDIT_POLL_SCHEDULE_MS, AUDIT_WINDOW_MS, fileIdCandidates } from './rules';
import { applicationWorkflowId, submitApplicationUpdate, type MerchantApplicationInput } from './messages';
import { ApplicationRepository } from './repository';
import { applicationView } from './view';

export interface ApplicationServiceDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  channels: ChannelRegistry;
  timeScale: number;
  /** The deadline of work done inside one request (the submit, a workflow update). */
  requestTimeoutMs: number;
  /** The keys that seal the applicant's data at rest. */
  payloadKeys: Keyring;
}

/** POST /api/v1/merchant/{id}/apply's fields, validated. */
export interface ApplyBody {
  channel_code: string;
  submit_data?: Record<string, unknown>;
  notify_url?: string;
}

function merchantNotFound(): AppError {
  return new AppError('order_not_found', 'merchant not found', 404);
}

/**
 * Onboarding (SPEC §5.6–5.7): the only code that starts or updates application workflows. Any
 * failure other than a SPEC refusal answers 500 internal_system with a clean message.
 */
export class ApplicationService {
  readonly repository: ApplicationRepository;
  private readonly merchants: MerchantRepository;

  constructor(private readonly deps: ApplicationServiceDeps) {
    this.repository = new ApplicationRepository(deps.db, deps.payloadKeys);
    this.merchants = new MerchantRepository(deps.db, deps.payloadKeys);
  }

  private async merchantExists(appId: string, merchantId: string): Promise<boolean> {
    return (await this.merchants.find(appId, merchantId)) !== null;
  }

  /**
   * One app never submits another's documents (SPEC §2, §5.6): every text in submit_data that
   * names a file uploaded at this channel must name one this app uploaded, and a text shaped
   * like the channel's file ids must name an upload at all.
   */
  private async checkFileReferences(
    appId: string,
    channelCode: string,
    fileIdPattern: RegExp | undefined,
    submitData: Record<string, unknown> | undefined,
  ): Promise<void> {
    const candidates = fileIdCandidates(submitData ?? {});
    if (candidates.length === 0) return;
    const owners = await this.merchants.fileOwners(
      channelCode,
      candidates.map((c) => c.value),
    );
    for (const { path, value } of candidates) {
      const owner = owners.get(value);
      if (owner === undefined ? fileIdPattern?.test(value) : owner !== appId) {
        throw new AppError(
          'invalid_param',
          `"submit_data.${path}" names file_id ${value}, which this app has not uploaded to channel ${channelCode}`,
        );
      }
    }
  }

  async apply(
    appId: string,
    merchantId: string,
    body: ApplyBody,
    log: Logger,
  ): Promise<{ application_id: string }> {
    try {
      const merchant = await this.merchants.findWithPersonalData(appId, merchantId);
      if (!merchant) throw merchantNotFound();
      const onboarding = this.deps.channels.get(body.channel_code)?.onboarding;
      if (!onboarding) {
        throw new AppError('internal_system', `channel ${body.channel_code} does not support onboarding`);
      }
      const problem = onboarding.problemWith?.({
        merchant: applicantOf(merchant),
        submitData: body.submit_data ?? {},
      });
      if (problem !== undefined) throw new AppError('invalid_param', problem);
      await this.checkFileReferences(appId, body.channel_code, onboarding.fileIdPattern, body.submit_data);
      const opened = await this.repository.open({
        applicationId: generateApplicationId(),
        appId,
        merchantId,
        channelCode: body.channel_code,
        submitData: body.submit_data ?? {},
        notifyUrl: body.notify_url ?? null,
      });
      // An application still open at this channel is the answer; nothing is submitted again.
      if (!opened.created) return { application_id: opened.applicationId };

      const input: MerchantApplicationInput = {
        appId,
        applicationId: opened.applicationId,
        merchantId,
        channelCode: body.channel_code,
        pollGapsMs: AUDIT_POLL_SCHEDULE_MS.map((ms) => scaleDuration(ms, this.deps.timeScale)),
        pollForMs: scaleDuration(AUDIT_WINDOW_MS, this.deps.timeScale),
      };
      const result = await this.deps.client.withDeadline(Date.now() + this.deps.requestTimeoutMs, () =>
        this.deps.client.workflow.executeUpdateWithStart(submitApplicationUpdate, {
          args: [],
          startWorkflowOperation: new WithStartWorkflowOperation('merchantApplicationWorkflow', {
            workflowId: applicationWorkflowId(opened.applicationId),
            taskQueue: this.deps.taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
      );
      return result;
    } catch (err) {
      if (err instanceof AppError) throw err;
      // SPEC §5.6: any other failure is 500 internal_system, with a clean message.
      const reason = err instanceof WorkflowUpdateFailedError ? err.cause?.message : undefined;
      log.error('apply failed', {
        merchant_id: merchantId,
        error: err instanceof Error ? err.message : String(err),
      });
      throw new AppError(
        'internal_system',
        reason ? `the channel did not accept the application: ${reason}` : INTERNAL_SYSTEM_MESSAGE,
      );
    }
  }

  /** The merchant's latest application as GET …/audit shows it. */
  async latest(appId: string, merchantId: string, log: Logger) {
    try {
      if (!(await this.merchantExists(appId, merchantId))) throw merchantNotFound();
      const latest = await this.repository.latestFor(appId, merchantId);
      if (!latest) throw new AppError('order_not_found', 'application not found', 404);
      return applicationView(latest);
    } catch (err) {
      if (err instanceof AppError) throw err;
      log.error('audit query failed', {
        error: err instanceof Error ? err.message : String(err),
      });
      throw new AppError('internal_system', INTERNAL_SYSTEM_MESSAGE);
    }
  }
}
