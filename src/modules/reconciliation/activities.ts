import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ChannelError, toActivityFailure } from '../../channels/errors';
import { portOf, type ChannelContext, type StatementRow } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Logger } from '../../platform/logger';
import type { WorkerMetrics } from '../../platform/worker-metrics';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import type { NotificationPublisher } from '../notifications';
import { accountContextOf, OrderRepository } from '../orders';
import { repairLostPayment } from './repair';
import { DEFAULT_ACCOUNT, type ReconciliationInput, type RunSummary, type StatementLoad } from './messages';
import { ReconciliationRepository } from './repository';
import { ReconciliationService } from './service';
import { addDays, billDateOf } from './rules';
import { mismatchView, runViewFor } from './view';

/** Pieces of the raw statement kept per row: small enough to seal and store one at a time. */
const CHUNK_BYTES = 1 << 20;
/** Statement lines written per INSERT. */
const ROW_BATCH = 1000;

export interface ReconciliationActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  payloadKeys: Keyring;
  metrics: WorkerMetrics;
  publisher: Pick<NotificationPublisher, 'publish'>;
  /** Starts the day's runs (through ReconciliationService) and signals repaired orders. */
  client: Client;
  taskQueue: string;
  timeScale: number;
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;

export function createReconciliationActivities(deps: ReconciliationActivityDeps) {
  const repo = new ReconciliationRepository(deps.db, deps.payloadKeys);
  const orders = new OrderRepository(deps.db);
  const merchants = new MerchantRepository(deps.db);
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  // The daily schedule's runs start where runs by hand do.
  const runs = new ReconciliationService(deps);

  function channel(code: string) {
    const found = deps.channels.get(code);
    if (!found)
      throw ApplicationFailure.nonRetryable(`channel ${code} is not supported`, 'channel_not_support');
    return found;
  }

  /** How to act for the run's account at its channel: as its latest order does. */
  async function contextOf(input: { channelCode: string; account: string }): Promise<ChannelContext> {
    if (input.account === DEFAULT_ACCOUNT) return {};
    const order = await repo.orderOfAccount(input.channelCode, input.account);
    if (order) {
      return accountContextOf(
        {
          appId: order.app_id,
          merchantId: order.merchant_id,
          channelCode: input.channelCode,
          subMerchantNo: order.sub_merchant_no,
          channelAccountId: order.channel_account_id,
        },
        merchants,
        accounts,
      );
    }
    const account = await repo.accountByNumber(input.channelCode, input.account);
    if (account) {
      return accountContextOf(
        {
          appId: account.app_id,
          merchantId: account.merchant_id,
          channelCode: input.channelCode,
          subMerchantNo: null,
          channelAccountId: account.id,
        },
        merchants,
        accounts,
      );
    }
    return { subMerchantNo: input.account };
  }

  /** Reads the statement from the file into the run's rows, a batch at a time, heartbeating. */
  async function readRows(runId: string, rows: AsyncIterable<StatementRow>, ctx: Context): Promise<number> {
    let batch: StatementRow[] = [];
    let line = 0;
    for await (const row of rows) {
      batch.push(row);
      if (batch.length === ROW_BATCH) {
        await repo.insertRows(runId, line, batch);
        line += batch.length;
        batch = [];
        ctx.heartbeat({ rows: line });
      }
    }
    await repo.insertRows(runId, line, batch);
    return line + batch.length;
  }

  return {
    /** Marks the run as running (recording it first when it was started by the schedule). */
    async beginReconciliationRun(input: ReconciliationInput & { startedBy: string }): Promise<void> {
      await repo.ensureRun({ ...input, startedBy: input.startedBy });
      await repo.setRunning(input.runId);
    },

    /**
     * Downloads the day's statement of the run's account to a file of its own, keeps it sealed
     * with its SHA-256, and reads its lines into the run's rows, replacing what an earlier
     * attempt read. In one activity: the file is on this worker's disk.
     */
    async loadStatement(input: ReconciliationInput): Promise<StatementLoad> {
      const ctx = Context.current();
      const statements = portOf(channel(input.channelCode), 'statements');
      const dir = await mkdtemp(join(tmpdir(), 'durapay-statement-'));
      const path = join(dir, 'statement');
      try {
        const file = await statements.fetch(await contextOf(input), input.billDate, path);
        await repo.clearStatement(input.runId);
        if (file.status === 'not_ready') return file;
        if (file.status === 'empty') {
          await repo.recordStatement(input.runId, {
            statement: 'empty',
            format: null,
            size: 0,
            sha256: null,
            channelHash: null,
            rows: 0,
          });
          return { status: 'empty' };
        }
        const sha256 = createHash('sha256');
        let seq = 0;
        for await (const piece of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
          const bytes = piece as Buffer;
          sha256.update(bytes);
          await repo.storeChunk(input.runId, seq, bytes);
          seq += 1;
          ctx.heartbeat({ stored: seq });
        }
        const rows = await readRows(input.runId, statements.parse(path, file), ctx);
        await repo.recordStatement(input.runId, {
          statement: 'ready',
          format: file.format,
          size: file.size,
          sha256: sha256.digest('hex'),
          channelHash: file.channelHash,
          rows,
        });
        return { status: 'ready', rows };
      } catch (err) {
        // A statement the channel refuses (an account it does not know) is not asked again; one
        // it could not give now (unreachable, a download cut short) is, on the profile's backoff.
        if (err instanceof ChannelError) throw toActivityFailure(err, 'query');
        throw err;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },

    /** Compares the statement with the books, and settles earlier days' carried findings. */
    async matchStatement(input: ReconciliationInput): Promise<void> {
      const now = new Date();
      await repo.match(input, now);
      const opened = await repo.settleCarried(input, now);
      for (const m of opened) {
        // A payment still missing after the carry-over is a mismatch of its own day's run.
        const run = await repo.find(m.run_id);
        if (run) await publishMismatch(run.run_id, m);
      }
    },

    /** Each `missing_local_payment` of the run, repaired through its order where it can be (./repair.ts). */
    async repairLostPayments(input: ReconciliationInput): Promise<number> {
      const ctx = Context.current();
      const repair = { repo, orders, merchants, accounts, client: deps.client, channel };
      let repaired = 0;
      let unconfirmed = 0;
      let afterId = '0';
      for (;;) {
        const page = await repo.mismatchesOf(input.runId, {
          state: 'open',
          category: 'missing_local_payment',
          afterId,
          limit: 100,
        });
        if (page.length === 0) break;
        for (const m of page) {
          afterId = m.id;
          ctx.heartbeat({ afterId });
          const outcome = await repairLostPayment(repair, m);
          if (outcome === 'repaired') repaired += 1;
          if (outcome === 'unconfirmed') unconfirmed += 1;
        }
      }
      deps.logger.info('lost payments repaired', { run_id: input.runId, repaired, unconfirmed });
      // Asked again on the activity's backoff, for the ones the channel did not answer about.
      if (unconfirmed > 0) {
        throw ApplicationFailure.retryable(
          `${unconfirmed} lost payment(s) could not be confirmed at the channel yet`,
          'channel_timeout',
        );
      }
      return repaired;
    },

    /** Records the run's outcome, tells the apps, counts it, and logs its summary. */
    async finishReconciliationRun(
      input: ReconciliationInput & { startedBy?: string },
      outcome: { status: 'completed'; statement: 'ready' | 'empty' } | { status: 'failed'; error: string },
    ): Promise<RunSummary | null> {
      const summary = outcome.status === 'completed' ? await repo.summarize(input, outcome.statement) : null;
      await repo.finish(input.runId, {
        status: outcome.status,
        summary,
        error: outcome.status === 'failed' ? outcome.error : null,
      });
      deps.metrics.reconciliationRun(input.channelCode, outcome.status, {
        ...(summary ? { matched: summary.matched, ...summary.categories } : {}),
      });
      deps.logger.info('reconciliation run finished', {
        run_id: input.runId,
        status: outcome.status,
        ...(summary ? { summary } : { error: (outcome as { error: string }).error }),
      });
      if (outcome.status === 'completed') {
        let afterId = '0';
        for (;;) {
          const page = await repo.mismatchesOf(input.runId, { state: 'open', afterId, limit: 500 });
          if (page.length === 0) break;
          for (const m of page) await publishMismatch(input.runId, m);
          afterId = page[page.length - 1]!.id;
        }
      }
      const run = (await repo.find(input.runId))!;
      for (const app of await repo.appsOf(input)) {
        const data = runViewFor(app.app_id, run, app.owned);
        await deps.publisher.publish({
          appId: app.app_id,
          type: 'reconciliation.completed',
          // Named by what it says: a run of the same day that finds the same tells nobody again.
          eventKey: `reconciliation.completed:${input.runId}:${createHash('sha256')
            .update(JSON.stringify({ status: data.status, summary: data.summary, error: data.error }))
            .digest('hex')
            .slice(0, 32)}`,
          // The URL given with a run by hand is that app's: each other app hears at its own.
          url: (input.startedBy === app.app_id ? input.notifyUrl : null) ?? app.notify_url,
          data,
          occurredAt: new Date().toISOString(),
        });
      }
      return summary;
    },

    /**
     * The daily schedule's step: starts a run for every account of every channel with a
     * statement that took orders on the day (runs already started are left to go on).
     */
    async startReconciliationRuns(input: { billDate?: string }): Promise<string[]> {
      const billDate = input.billDate ?? addDays(billDateOf(new Date()), -1);
      const started: string[] = [];
      for (const code of deps.channels.codes()) {
        if (!deps.channels.get(code)?.statements) continue;
        for (const account of await repo.accountsOn(code, billDate)) {
          const run = await runs.startRun({
            channelCode: code,
            account,
            billDate,
            notifyUrl: null,
            startedBy: 'schedule',
          });
          if (run.started) started.push(run.runId);
        }
      }
      deps.logger.info('reconciliation runs started', { bill_date: billDate, runs: started.length });
      return started;
    },
  };

  async function publishMismatch(runId: string, m: Parameters<typeof mismatchView>[0]): Promise<void> {
    if (!m.app_id) return; // about no order of any app: an operator's alone
    const order = await orders.findOrderByTradeNo(m.trade_no);
    if (!order) return;
    await deps.publisher.publish({
      appId: m.app_id,
      type: 'reconciliation.mismatch',
      eventKey: `reconciliation.mismatch:${runId}:${m.category}:${m.kind}:${m.trade_no}:${m.refund_no ?? ''}`,
      url: order.notifyUrl,
      data: mismatchView(m),
      occurredAt: new Date().toISOString(),
      tradeNo: m.trade_no,
      ...(m.refund_no ? { refundNo: m.refund_no } : {}),
    });
  }
}
