/**
 * The console phase: `--console-orders` orders (100 000 by default) of the bench's app spread over
 * the last 30 days, in every status, a few of them waiting for refund review; then the operator
 * console's reads over them, each asked 20 times through `/console/api` as the page asks: the
 * first page of orders, a page 50 pages deep (followed by its cursors), a filter by status, by
 * merchant order number, by amount and by date, the review queue, and the overview (today and
 * 30 days, by channel and pay method, the exceptions). It reports each read's latency; a page
 * of a list must cost the same deep in the table as at its top.
 */
import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { OperatorService } from '../src/modules/operators';
import { connectDatabase } from '../src/platform/db';
import { DEFAULT_CONSOLE_SETTINGS } from '../src/platform/config';
import { say } from './lib/cli';
import { UsageMonitor } from './lib/procstat';
import type { PhaseResult } from './lib/report';
import { summarize } from './lib/stats';
import type { Bench } from './harness';

const TIMES = 20;

interface Answer {
  code: string;
  data: { list?: unknown[]; next?: string | null } | null;
}

export async function consolePhase(b: Bench, out: PhaseResult[]): Promise<void> {
  const count = b.opts.consoleOrders;
  if (!b.stack.databaseUrl) throw new Error('the console phase needs the stack database (DATABASE_URL)');
  const pg = new PgClient({ connectionString: b.stack.databaseUrl });
  await pg.connect();
  try {
    say(`console: writing ${count} orders over 30 days`);
    const statuses = ['paid', 'paid', 'paid', 'closed', 'pending', 'refunded'];
    await pg.query(
      `INSERT INTO orders (trade_no, app_id, merchant_order_no, channel_code, pay_method, amount, currency,
         subject, notify_url, status, pay_credential, pay_time, expire_time, created_at, updated_at,
         needs_refund_review)
       SELECT 'CB' || $2 || lpad(i::text, 9, '0'), $3, 'MC' || $2 || lpad(i::text, 9, '0'), 'sandbox',
              (ARRAY['qr_code', 'h5', 'jsapi'])[1 + i % 3], 100 + (i * 7919) % 100000, 'CNY', 'Bench, console',
              $4, ($5::text[])[1 + i % 6], '{}', CASE WHEN i % 6 IN (0, 1, 2, 5) THEN x.at END,
              x.at + interval '30 minutes', x.at, x.at, i % 5000 = 0 AND i % 6 IN (0, 1, 2)
         FROM generate_series(1, $1::int) AS i,
              LATERAL (SELECT now() - (i::bigint * interval '30 days') / $1::int AS at) AS x`,
      [count, b.runTag, b.stack.app.app_id, b.receiver.url, statuses],
    );
    await pg.query('ANALYZE orders');
  } finally {
    await pg.end();
  }

  // An admin of the console, signed in as the page signs in.
  const db = connectDatabase(b.stack.databaseUrl);
  const username = `bench-${b.runTag}`.slice(0, 60);
  const password = `bench ${randomUUID()}`;
  try {
    await new OperatorService({
      db,
      consoleSettings: DEFAULT_CONSOLE_SETTINGS,
    }).create({ operatorId: null, username: 'bench' }, { username, role: 'admin', password });
  } finally {
    await db.close();
  }
  const signIn = await fetch(`${b.stack.baseUrl}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const cookie = signIn.headers
    .getSetCookie()
    .find((c) => c.startsWith('durapay_console='))
    ?.split(';')[0];
  if (!cookie) throw new Error(`console sign-in answered ${signIn.status}`);
  const get = async (path: string): Promise<Answer> => {
    const res = await fetch(`${b.stack.baseUrl}/console/api${path}`, { headers: { cookie } });
    const answer = (await res.json()) as Answer;
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status} ${answer.code}`);
    return answer;
  };

  // The cursor 50 pages deep, as an operator paging down would reach it.
  let deep: string | null | undefined = null;
  for (let i = 0; i < 50; i += 1) {
    deep = (await get(`/orders?limit=20${deep ? `&after=${deep}` : ''}`)).data?.next;
    if (!deep) break;
  }
  const aWeekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const twoWeeksAgo = new Date(Date.now() - 14 * 86_400_000).toISOString();
  const reads: [string, string][] = [
    ['orders, first page', '/orders?limit=20'],
    ['orders, 50 pages deep', `/orders?limit=20${deep ? `&after=${deep}` : ''}`],
    ['orders by status', '/orders?status=closed&limit=20'],
    [
      'orders by merchant_order_no',
      `/orders?merchant_order_no=MC${b.runTag}${String(Math.ceil(count / 2)).padStart(9, '0')}`,
    ],
    ['orders by amount', '/orders?min_amount=5000&max_amount=6000&limit=20'],
    ['orders of a week', `/orders?from=${twoWeeksAgo}&to=${aWeekAgo}&limit=20`],
    ['review queue', '/orders?needs_refund_review=true&limit=20'],
    ['overview', '/overview'],
  ];
  const monitor = new UsageMonitor(b.stack.roles);
  monitor.start();
  const started = Date.now();
  const latencies: number[] = [];
  const byRead: Record<string, number> = {};
  for (const [name, path] of reads) {
    const samples: number[] = [];
    for (let i = 0; i < TIMES; i += 1) {
      const t0 = performance.now();
      await get(path);
      samples.push(performance.now() - t0);
    }
    latencies.push(...samples);
    const p50 = summarize(samples)!.p50;
    byRead[name] = Math.round(p50 * 10) / 10;
    say(`console: ${name}: p50 ${p50.toFixed(1)} ms (${TIMES} reads, ${count} orders)`);
  }
  const elapsedMs = Date.now() - started;
  const processes = monitor.stop();
  out.push({
    name: 'console',
    concurrency: 1,
    requests: latencies.length,
    throughput_rps: Math.round((latencies.length / Math.max(elapsedMs, 1)) * 1000),
    latency_ms: summarize(latencies),
    errors: 0,
    cpu_s: processes.api ? processes.api.cpu_s : null,
    peak_rss_mb: processes.api ? processes.api.peak_rss_mb : null,
    processes,
    error_messages: {},
    console_reads_p50_ms: byRead,
    measures: `the operator console's reads over ${count} orders, each asked ${TIMES} times one after another: latency of each (console_reads_p50_ms) and of all`,
  });
}
