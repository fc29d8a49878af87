/**
 * `npm run fuzz`: thousands of generated requests over every endpoint, from a seed, against a
 * whole durapay on this machine. Each answer must be the contract's envelope (or the callback's
 * `fail`), never a 5xx for the client's own fault, never a stack trace or SQL text, never later
 * than the request deadline; and the API must log no unexpected error. See docs/testing.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import type { AppCredentials } from '../src/modules/apps/repository';
import { signRequest } from '../src/platform/crypto/http-signature';
import { intOption, say } from '../bench/lib/cli';
import { progressBar } from '../bench/lib/progress';
import { assertLoopback, attachStack, startOwnStack, stopAllStacks, type Stack } from '../bench/lib/stack';
import { generateCases, type Fixtures, type FuzzCase } from './lib/generate';
import { violations } from './lib/oracle';
import { sendCase } from './lib/send';

const ROOT = path.join(__dirname, '..');

interface Options {
  requests: number;
  seed: number;
  concurrency: number;
  deadlineMs: number;
  baseUrl?: string;
  only?: number;
  outDir: string;
  keep: boolean;
}

function parseOptions(argv: string[]): Options {
  const program = new Command()
    .name('npm run fuzz --')
    .description(
      'Send generated requests to every endpoint of durapay and check every answer against the contract.',
    )
    .option('--requests <n>', 'requests to send', intOption('--requests', 1), 10_000)
    .option(
      '--seed <n>',
      'seed of the generator (the same seed sends the same requests)',
      intOption('--seed', 0),
    )
    .option('--concurrency <n>', 'requests in flight at once', intOption('--concurrency', 1), 8)
    .option(
      '--deadline-ms <n>',
      'an answer later than this is a violation',
      intOption('--deadline-ms', 1),
      10_000,
    )
    .option(
      '--base-url <url>',
      'fuzz a durapay that is already running (loopback only) instead of starting one',
    )
    .option('--only <index>', 'send only the case of this index (to reproduce one)', intOption('--only', 0))
    .option('--out-dir <dir>', 'where the JSON report is written', path.join(ROOT, 'fuzz', 'results'))
    .option('--keep', "keep the own stack's scratch directory (its logs)", false)
    .parse(argv);
  const o = program.opts<Omit<Options, 'seed'> & { seed?: number }>();
  return { ...o, seed: o.seed ?? Math.floor(Math.random() * 2 ** 31) };
}

/** A signed request of the run's own app, for the fixtures. */
async function call(
  stack: Stack,
  method: string,
  target: string,
  json?: unknown,
): Promise<Record<string, unknown>> {
  const body = json === undefined ? undefined : JSON.stringify(json);
  const signed = signRequest({ method, target, body, keyId: stack.app.app_id, secret: stack.app.secret });
  const res = await fetch(`${stack.baseUrl}${target}`, {
    method,
    headers: { ...signed, ...(body ? { 'content-type': 'application/json' } : {}) },
    body,
  });
  const out = (await res.json()) as { code: string; message: string; data: Record<string, unknown> };
  if (out.code !== 'success') throw new Error(`fixture ${method} ${target}: ${out.code} ${out.message}`);
  return out.data;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Real objects for the generated requests to name: orders pending and paid, a refund, a merchant, a file. */
async function makeFixtures(stack: Stack): Promise<Fixtures> {
  const stamp = Date.now().toString(36);
  const merchantId = `fuzz-${stamp}`;
  await call(stack, 'POST', '/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Fuzz' });
  // Its account at the sandbox channel (SPEC §5.8): the creates naming it reach the channel.
  await call(stack, 'PUT', `/api/v1/merchant/${merchantId}/channel-accounts/sandbox`, {
    sub_merchant_no: `S-${merchantId}`,
  });
  const order = (no: string) => ({
    merchant_order_no: `FZ-${stamp}-${no}`,
    pay_method: 'qr_code',
    amount: 1_000,
    subject: 'Fuzz',
    notify_url: 'http://127.0.0.1:9/hook',
    expire_minutes: 1440,
  });
  const pending = await call(stack, 'POST', '/api/v1/pay/unified-order', order('pending'));
  const paid = await call(stack, 'POST', '/api/v1/pay/unified-order', order('paid'));
  const payUrl = (paid.pay_credential as { pay_url: string }).pay_url;
  await fetch(payUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"result":"success"}',
  });
  const paidTradeNo = String(paid.trade_no);
  await until('the fixture order paid', async () =>
    (await call(stack, 'GET', `/api/v1/pay/query/${paidTradeNo}`)).status === 'paid' ? true : undefined,
  );
  const refund = await call(stack, 'POST', '/api/v1/pay/refund', { trade_no: paidTradeNo, refund_amount: 1 });
  const notifications = await until('a notification', async () => {
    const page = await call(stack, 'GET', `/api/v1/notifications?trade_no=${paidTradeNo}`);
    const list = page.list as { notification_id: string }[];
    return list.length > 0 ? list : undefined;
  });
  const boundary = `fixture${stamp}`;
  const form = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file_media_type"\r\n\r\nimage/png\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="id.png"\r\nContent-Type: image/png\r\n\r\n` +
      `\x89PNG fixture\r\n--${boundary}--\r\n`,
    'latin1',
  );
  const target = '/api/v1/merchant/upload-file';
  const signed = signRequest({
    method: 'POST',
    target,
    body: form,
    keyId: stack.app.app_id,
    secret: stack.app.secret,
  });
  const uploaded = (await (
    await fetch(`${stack.baseUrl}${target}`, {
      method: 'POST',
      headers: { ...signed, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: form,
    })
  ).json()) as { data: { file_id: string } };
  return {
    pendingTradeNo: String(pending.trade_no),
    paidTradeNo,
    refundNo: String(refund.refund_no),
    merchantId,
    fileId: uploaded.data.file_id,
    notificationId: notifications[0]!.notification_id,
  };
}

interface Finding {
  index: number;
  family: string;
  method: string;
  target: string;
  status: number;
  problems: string[];
  request: { headers: Record<string, string>; auth: string; body?: string; raw?: string };
  answer: string;
}

function describeBody(body: Buffer | undefined): string | undefined {
  if (body === undefined) return undefined;
  const text = body.toString('utf8');
  const printable = Buffer.from(text, 'utf8').equals(body) && !text.includes('\u0000');
  const shown = printable ? text : `base64:${body.toString('base64')}`;
  return shown.length > 600 ? `${shown.slice(0, 600)}… (${body.length} bytes)` : shown;
}

/** Lines the API or worker logged as unexpected errors: a 500 the client never saw is a violation too. */
function unexpectedErrors(logFile: string | undefined, fromByte: number): string[] {
  if (!logFile || !fs.existsSync(logFile)) return [];
  const text = fs.readFileSync(logFile).subarray(fromByte).toString('utf8');
  return text.split('\n').filter((l) => /"message":"unexpected error"/.test(l));
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-fuzz-'));
  process.once('SIGINT', () => {
    void stopAllStacks().finally(() => process.exit(130));
  });
  let stack: Stack | undefined;
  try {
    say(`fuzz: seed ${options.seed}, ${options.requests} requests, ${options.concurrency} at once`);
    stack = options.baseUrl
      ? await attachStack({
          baseUrl: assertLoopback(options.baseUrl).origin,
          temporalAddress: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
          namespace: 'default',
          taskQueue: 'durapay',
          appScopes: 'payments,merchants',
          purpose: 'fuzz',
          say,
        })
      : await startOwnStack({
          workDir,
          databaseUrl: process.env.DATABASE_URL,
          appScopes: 'payments,merchants',
          purpose: 'fuzz',
          say,
        });
    const fixtures = await makeFixtures(stack);
    const logStart = stack.logFile && fs.existsSync(stack.logFile) ? fs.statSync(stack.logFile).size : 0;
    const all = generateCases(fixtures, options.seed, options.requests);
    const cases: [number, FuzzCase][] =
      options.only === undefined ? all.map((c, i) => [i, c]) : [[options.only, all[options.only]!]];

    const findings: Finding[] = [];
    const families = new Map<
      string,
      { requests: number; statuses: Map<number, number>; violations: number; slowestMs: number }
    >();
    const bar = progressBar('fuzz', cases.length, 'requests');
    let next = 0;
    let done = 0;
    const started = Date.now();
    const app: AppCredentials = stack.app;
    const worker = async () => {
      while (next < cases.length) {
        const [index, c] = cases[next++]!;
        let problems: string[];
        let status = 0;
        let answer = '';
        try {
          const { asked, seen } = await sendCase(stack!.baseUrl, app, c, options.deadlineMs + 5_000);
          status = seen.status;
          answer = seen.body.subarray(0, 300).toString('utf8');
          problems = violations(asked, seen, options.deadlineMs);
          const f = families.get(c.family) ?? {
            requests: 0,
            statuses: new Map(),
            violations: 0,
            slowestMs: 0,
          };
          f.slowestMs = Math.max(f.slowestMs, seen.ms);
          families.set(c.family, f);
        } catch (err) {
          problems = [`no answer: ${err instanceof Error ? err.message : String(err)}`];
        }
        const f = families.get(c.family) ?? { requests: 0, statuses: new Map(), violations: 0, slowestMs: 0 };
        f.requests += 1;
        f.statuses.set(status, (f.statuses.get(status) ?? 0) + 1);
        if (problems.length > 0) {
          f.violations += 1;
          findings.push({
            index,
            family: c.family,
            method: c.method,
            target: c.target.length > 200 ? `${c.target.slice(0, 200)}…` : c.target,
            status,
            problems,
            request: {
              headers: c.headers,
              auth: c.auth,
              body: describeBody(c.body),
              raw: describeBody(c.raw),
            },
            answer,
          });
        }
        families.set(c.family, f);
        bar.update(++done, findings.length ? `${findings.length} violation(s)` : '');
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    bar.stop();
    const seconds = (Date.now() - started) / 1000;
    const logged = unexpectedErrors(stack.logFile, logStart);

    const rows = [...families.entries()].sort(([a], [b]) => a.localeCompare(b));
    const lines = [
      `| family | requests | answers by status | violations | slowest ms |`,
      `| --- | ---: | --- | ---: | ---: |`,
      ...rows.map(
        ([name, f]) =>
          `| ${name} | ${f.requests} | ${[...f.statuses.entries()]
            .sort(([a], [b]) => a - b)
            .map(([s, n]) => `${s}×${n}`)
            .join(' ')} | ${f.violations} | ${Math.round(f.slowestMs)} |`,
      ),
    ];
    const total = cases.length;
    const violationCount = findings.length + logged.length;
    console.log(lines.join('\n'));
    console.log(
      `\nfuzz: ${total} requests in ${seconds.toFixed(1)} s (seed ${options.seed}), ` +
        `${findings.length} answers in violation, ${logged.length} unexpected errors logged: ` +
        `violations: ${violationCount}`,
    );
    for (const f of findings.slice(0, 20)) {
      console.log(
        `\n#${f.index} ${f.family} ${f.method} ${f.target} → ${f.status}: ${f.problems.join('; ')}`,
      );
      console.log(`  request: ${JSON.stringify(f.request)}`);
      console.log(`  answer: ${JSON.stringify(f.answer)}`);
      console.log(
        `  reproduce: npm run fuzz -- --seed ${options.seed} --requests ${options.requests} --only ${f.index}`,
      );
    }
    for (const line of logged.slice(0, 5)) console.log(`\nlogged: ${line.slice(0, 600)}`);

    fs.mkdirSync(options.outDir, { recursive: true });
    const out = path.join(options.outDir, `fuzz-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(
      out,
      `${JSON.stringify(
        {
          seed: options.seed,
          requests: total,
          seconds,
          stack: stack.description,
          families: Object.fromEntries(
            rows.map(([name, f]) => [
              name,
              { requests: f.requests, statuses: Object.fromEntries(f.statuses), violations: f.violations },
            ]),
          ),
          violations: violationCount,
          findings,
          loggedErrors: logged,
        },
        null,
        2,
      )}\n`,
    );
    say(`report: ${out}`);
    process.exitCode = violationCount > 0 ? 1 : 0;
  } finally {
    await stack?.stop().catch((err: unknown) => say(`could not stop the stack: ${String(err)}`));
    if (!options.keep) fs.rmSync(workDir, { recursive: true, force: true });
    else say(`scratch directory kept: ${workDir}`);
  }
}

main().catch((err: unknown) => {
  say(`fuzz failed: ${err instanceof Error ? err.message : String(err)}`);
  void stopAllStacks().finally(() => process.exit(2));
});
