import type { Client } from '@temporalio/client';
import { AppError } from '../../platform/errors';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import type { ChannelRegistry } from '../../channels/registry';
import {
  reconciliationRunId,
  reconciliationWorkflowId,
  type ReconciliationInput,
  type ReconciliationResult,
  type Resolution,
} from './messages';
import { ReconciliationRepository, type RunRow } from './repository';
import { isBillDate, readyDeadline, billDateOf } from './rules';
import type { reconciliationWorkflow } from './workflow';

export interface ReconciliationServiceDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  payloadKeys: Keyring;
  channels: ChannelRegistry;
  timeScale: number;
}

export interface StartRunRequest {
  channelCode: string;
  billDate: string;
  account?: string;
  notifyUrl?: string;
  /** Who started it: an app id, `cli`, or `schedule`. */
  startedBy: string;
  /** Only accounts with this app's orders (an app starting runs); absent: every account. */
  appId?: string;
}

/**
 * SPEC §10: the only code that starts reconciliation runs (by hand, and for the daily
 * schedule's workflow) and reads them for the API.
 */
export class ReconciliationService {
  readonly repository: ReconciliationRepository;

  constructor(private readonly deps: ReconciliationServiceDeps) {
    this.repository = new ReconciliationRepository(deps.db, deps.payloadKeys);
  }

  /**
   * Starts the runs of a day (every account of the channel that took orders then, or one), each
   * once: a run already going is left to go on; a finished one starts again and replaces its
   * findings. Answers the runs as they are recorded.
   */
  async start(r: StartRunRequest): Promise<RunRow[]> {
    const channel = this.deps.channels.get(r.channelCode);
    if (!channel)
      throw new AppError('invalid_param', `channel_code: no channel ${r.channelCode} is configured`);
    if (!channel.statements) {
      throw new AppError('channel_not_support', `channel ${r.channelCode} does not provide statements`);
    }
    if (!isBillDate(r.billDate))
      throw new AppError('invalid_param', 'bill_date must be a calendar date YYYY-MM-DD');
    if (r.billDate > billDateOf(new Date())) {
      throw new AppError('invalid_param', 'bill_date must not be in the future');
    }
    let accounts = r.account ? [r.account] : await this.repository.accountsOn(r.channelCode, r.billDate);
    if (r.appId) {
      const own = new Set(await this.repository.accountsOfApp(r.appId, r.channelCode));
      if (r.account && !own.has(r.account)) {
        throw new AppError(
          'invalid_param',
          `account: no account ${r.account} of this app at ${r.channelCode}`,
        );
      }
      accounts = accounts.filter((a) => own.has(a));
    }
    const runs: RunRow[] = [];
    for (const account of accounts) {
      const { runId } = await this.startRun({
        channelCode: r.channelCode,
        account,
        billDate: r.billDate,
        notifyUrl: r.notifyUrl ?? null,
        startedBy: r.startedBy,
      });
      runs.push((await this.repository.find(runId))!);
    }
    return runs;
  }

  /**
   * Records one run of an account's day and starts its workflow, once: a run already going is
   * left to go on (`started: false`). The one place runs start, by hand (`start`) and by the
   * daily schedule (the `startReconciliationRuns` activity).
   */
  async startRun(run: {
    channelCode: string;
    account: string;
    billDate: string;
    notifyUrl: string | null;
    startedBy: string;
  }): Promise<{ runId: string; started: boolean }> {
    const runId = reconciliationRunId(run.channelCode, run.account, run.billDate);
    await this.repository.ensureRun({
      runId,
      channelCode: run.channelCode,
      account: run.account,
      billDate: run.billDate,
      startedBy: run.startedBy,
    });
    const input: ReconciliationInput & { startedBy: string } = {
      runId,
      channelCode: run.channelCode,
      account: run.account,
      billDate: run.billDate,
      readyDeadline: readyDeadline(run.billDate).toISOString(),
      notifyUrl: run.notifyUrl,
      timeScale: this.deps.timeScale,
      startedBy: run.startedBy,
    };
    try {
      await this.deps.client.workflow.start<typeof reconciliationWorkflow>('reconciliationWorkflow', {
        workflowId: reconciliationWorkflowId(runId),
        taskQueue: this.deps.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
      });
      return { runId, started: true };
    } catch (err) {
      if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
      return { runId, started: false };
    }
  }

  /** Waits for a run's workflow to end (the CLI's `--wait`). */
  async result(runId: string): Promise<ReconciliationResult> {
    return this.deps.client.workflow
      .getHandle<typeof reconciliationWorkflow>(reconciliationWorkflowId(runId))
      .result();
  }

  /**
   * Records a person's resolution of one of the app's findings; `appId` null for a finding about
   * no app's order (a payment at the channel durapay never made), which only an operator sees.
   */
  async resolve(
    appId: string | null,
    id: string,
    r: { resolution: Resolution; note: string | null; resolvedBy: string },
  ) {
    const found = /^\d{1,18}$/.test(id) ? await this.repository.mismatch(id) : undefined;
    if (!found || found.app_id !== appId) {
      throw new AppError('reconciliation_not_found', `mismatch ${id} not found`);
    }
    const resolved = await this.repository.resolve(id, r);
    if (!resolved) {
      throw new AppError(
        'invalid_param',
        `mismatch ${id} is ${found.state}: only an open or repaired one is resolved`,
      );
    }
    return resolved;
  }
}
