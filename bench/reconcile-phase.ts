/**
 * The reconcile phase: one day of one sandbox account with `--reconcile-rows` paid orders (a
 * million by default), the same payments on the sandbox channel's statement, reconciled once
 * through the API. It reports the run's time, its statement lines a second, and the CPU and peak
 * memory of each process: the worker's peak is the figure that must stay flat however long the
 * statement is (the sandbox, which makes the statement, runs in the API process).
 */
import { Client as PgClient } from 'pg';
import type { ReconciliationRun } from '../src/sdk';
import { addDays, billDateOf, dayStart } from '../src/modules/reconciliation/rules';
import { say } from './lib/cli';
import { UsageMonitor, type Usage } from './lib/procstat';
import type { PhaseResult } from './lib/report';
import type { Bench } from './harness';

/** How long the phase waits for its run before it reports a failure. */
const RUN_DEADLINE_MS = 60 * 60_000;

export async function reconcilePhase(b: Bench, out: PhaseResult[]): Promise<void> {
  const rows = b.opts.reconcileRows;
  if (!b.stack.databaseUrl) throw new Error('the reconcile phase needs the stack database (DATABASE_URL)');
  const merchantId = `bench-rec-${b.runTag}`;
  const account = `S-${merchantId}`;
  // Yesterday in China: a day no other phase's orders fall on at this account.
  const billDate = addDays(billDateOf(new Date()), -1);
  const from = dayStart(billDate).getTime();

  const pg = new PgClient({ connectionString: b.stack.databaseUrl });
  await pg.connect();
  try {
    say(`reconcile: writing ${rows} paid orders and their payments at the sandbox channel`);
    // The merchant and its sandbox account as an attach records them (the bench's app has the
    // payments scope only, and the phase measures the run, not the attach).
    await pg.query(
      `INSERT INTO merchants (app_id, merchant_id, merchant_name, status, channel_code, sub_merchant_no,
         created_at, updated_at)
       VALUES ($1, $2, 'Bench reconciliation', 'active', 'sandbox', $3, now(), now())`,
      [b.stack.app.app_id, merchantId, account],
    );
    const [{ id: accountId }] = (
      await pg.query<{ id: string }>(
        `INSERT INTO merchant_channel_accounts (app_id, merchant_id, channel_code, kind, account_no, status, source,
           activated_at)
         VALUES ($1, $2, 'sandbox', 'sub_merchant_no', $3, 'active', 'attached', now()) RETURNING id`,
        [b.stack.app.app_id, merchantId, account],
      )
    ).rows as [{ id: string }];
    // The same trade numbers on both sides, paid at instants spread over the day.
    const series = `FROM generate_series(1, $1::int) AS i,
      LATERAL (SELECT 'RB' || $2 || lpad(i::text, 9, '0') AS t,
                      to_timestamp(($3::bigint + (i::bigint * 86399000) / $1::bigint) / 1000.0) AS at) AS x`;
    await pg.query(
      `INSERT INTO orders (trade_no, app_id, merchant_order_no, merchant_id, channel_code, pay_method, amount,
         currency, subject, notify_url, status, channel_trade_no, pay_credential, pay_time, expire_time,
         created_at, updated_at, sub_merchant_no, channel_account_id)
       SELECT x.t, $4, 'MB' || x.t, $5, 'sandbox', 'qr_code', 100 + i % 1000, 'CNY', 'Bench, reconciled',
              $6, 'paid', 'SBX-' || x.t, '{}', x.at, x.at + interval '30 minutes', x.at, x.at, $7, $8
       ${series}`,
      [rows, b.runTag, from, b.stack.app.app_id, merchantId, b.receiver.url, account, accountId],
    );
    await pg.query(
      `INSERT INTO sandbox_orders (trade_no, channel_trade_no, amount, currency, pay_method, subject, expire_at,
         notify_url, extra, sub_merchant_no, profit_sharing, callback_mode, status, paid_at, created_at, updated_at)
       SELECT x.t, 'SBX-' || x.t, 100 + i % 1000, 'CNY', 'qr_code', 'Bench, reconciled', x.at + interval '30 minutes',
              $4, '{}', $5, false, 'drop', 'paid', x.at, x.at, x.at
       ${series}`,
      [rows, b.runTag, from, b.receiver.url, account],
    );
  } finally {
    await pg.end();
  }

  const monitor = new UsageMonitor(b.stack.roles);
  monitor.start();
  const started = Date.now();
  const [run] = (await b.sdk.startReconciliation({ channel_code: 'sandbox', bill_date: billDate, account }))
    .list;
  let last: ReconciliationRun | undefined = run;
  while (Date.now() - started < RUN_DEADLINE_MS) {
    try {
      const page = await b.sdk.listReconciliationRuns({ channel_code: 'sandbox', bill_date: billDate });
      last = page.list.find((r) => r.run_id === run!.run_id);
    } catch (err) {
      // The sandbox makes the statement in the API's process: a poll may wait behind it.
      say(`reconcile: a poll went unanswered (${err instanceof Error ? err.message : String(err)})`);
    }
    if (last && (last.status === 'completed' || last.status === 'failed')) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const elapsedMs = Date.now() - started;
  const processes: Record<string, Usage> = monitor.stop();
  const ok = last?.status === 'completed' && last.summary?.matched === rows;
  say(
    `reconcile: ${rows} lines in ${(elapsedMs / 1000).toFixed(1)} s, run ${last?.status ?? 'unknown'}` +
      (last?.summary ? `, ${last.summary.matched} matched` : '') +
      `; worker peak RSS ${processes.worker?.peak_rss_mb ?? '?'} MiB`,
  );
  out.push({
    name: 'reconcile',
    concurrency: 1,
    requests: ok ? rows : 0,
    throughput_rps: Math.round((rows / Math.max(elapsedMs, 1)) * 1000),
    latency_ms: null,
    errors: ok ? 0 : 1,
    cpu_s: processes.worker ? processes.worker.cpu_s : null,
    peak_rss_mb: processes.worker ? processes.worker.peak_rss_mb : null,
    processes,
    error_messages: ok
      ? {}
      : { [`run ${last?.status ?? 'unknown'}: ${last?.error ?? 'not all lines matched'}`]: 1 },
    measures: `one sandbox account's day of ${rows} payments reconciled: lines a second (throughput), the worker's CPU and peak RSS`,
  });
}
