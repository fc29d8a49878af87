import { SingleBar } from 'cli-progress';
import { channelsFromConfig } from '../../channels/registry';
import { ReconciliationService, type ReconciliationResult } from '../../modules/reconciliation';
import { resolveMasterKey } from '../../platform/crypto/master-key';
import { resolvePayloadKeys } from '../../platform/crypto/keyring';
import { AppError } from '../../platform/errors';
import { connectClient } from '../../platform/temporal';
import { boot } from '../boot';
import { fail } from '../config';
import { withDatabase } from '../database';

/**
 * `durapay reconcile`: starts a day's reconciliation of a channel by hand (SPEC §10), every
 * account that took orders that day or the one named, and follows the runs to their end with a
 * progress bar (statement lines read, runs finished); prints each run's summary as a JSON line.
 * Exits 1 when a run failed or found mismatches.
 */
export async function reconcile(opts: { channel: string; date: string; account?: string; noWait?: boolean }) {
  const { config, logger } = boot('cli');
  if (!config.temporal.address)
    fail('set TEMPORAL_ADDRESS (npm start prints it) to the server the worker uses');
  let keyring;
  try {
    keyring = resolvePayloadKeys(config);
  } catch (err) {
    return fail(err);
  }
  const { client, connection } = await connectClient(
    { address: config.temporal.address, namespace: config.temporal.namespace },
    keyring,
  ).catch(fail);
  const channels = channelsFromConfig(config, resolveMasterKey(config));
  let troubled = false;
  try {
    await withDatabase(config, logger, async (db) => {
      const service = new ReconciliationService({
        db,
        client,
        taskQueue: config.temporal.taskQueue,
        payloadKeys: keyring,
        channels,
        timeScale: config.timeScale,
      });
      const runs = await service.start({
        channelCode: opts.channel,
        billDate: opts.date,
        ...(opts.account ? { account: opts.account } : {}),
        startedBy: 'cli',
      });
      if (runs.length === 0) {
        console.error(`no account of ${opts.channel} took orders on ${opts.date}: nothing to reconcile`);
        return;
      }
      console.error(`started ${runs.length} run(s): ${runs.map((r) => r.run_id).join(', ')}`);
      if (opts.noWait) return;
      const bar = new SingleBar({
        format: 'reconciling [{bar}] {value}/{total} runs · {rows} statement lines read',
        stream: process.stderr,
        noTTYOutput: true,
        notTTYSchedule: 2000,
        hideCursor: true,
      });
      bar.start(runs.length, 0, { rows: 0 });
      const pending = new Set(runs.map((r) => r.run_id));
      const done = runs.map((r) => service.result(r.run_id));
      const ticker = setInterval(() => {
        void Promise.all([...pending].map((id) => service.repository.find(id))).then((rows) =>
          bar.update({ rows: rows.reduce((n, r) => n + Number(r?.rows_read ?? 0), 0) }),
        );
      }, 1000);
      try {
        for (const [i, result] of done.entries()) {
          const r: ReconciliationResult = await result;
          pending.delete(runs[i]!.run_id);
          bar.increment(1);
          const found = r.summary
            ? Object.values(r.summary.categories).reduce((a: number, b: number) => a + b, 0)
            : 0;
          if (r.status === 'failed' || found > 0) troubled = true;
          process.stdout.write(`${JSON.stringify(r)}\n`);
        }
      } finally {
        clearInterval(ticker);
        bar.stop();
      }
    });
  } catch (err) {
    fail(err instanceof AppError ? `${err.code}: ${err.message}` : err);
  } finally {
    await connection.close();
  }
  if (troubled) process.exitCode = 1;
}
