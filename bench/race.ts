/**
 * `npm run race`: rounds of identical creates sent at the same moment (SPEC §3.1: N identical
 * creates yield one order, one channel call, one `is_idempotent: false`), counted where they
 * land: the answers, the channel's create requests and the read model. Against its own stack,
 * or a running `npm start` with --base-url.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { withDatabase } from '../src/cli/database';
import type { AppCredentials } from '../src/modules/apps/repository';
import { signRequest } from '../src/platform/crypto/http-signature';
import { createLogger } from '../src/platform/logger';
import { intOption, say } from './lib/cli';
import { progressBar } from './lib/progress';
import { assertLoopback, attachStack, startOwnStack, stopAllStacks, type Stack } from './lib/stack';

interface Options {
  rounds: number;
  creates: number;
  baseUrl?: string;
}

interface Round {
  merchantOrderNo: string;
  codes: string[];
  firsts: number;
  tradeNos: number;
  channelOrders: number;
  channelRequests: number;
  orders: number;
}

async function createOnce(baseUrl: string, app: AppCredentials, body: string) {
  const target = '/api/v1/pay/unified-order';
  const signed = signRequest({ method: 'POST', target, body, keyId: app.app_id, secret: app.secret });
  const res = await fetch(`${baseUrl}${target}`, {
    method: 'POST',
    headers: { ...signed, 'content-type': 'application/json' },
    body,
  });
  return (await res.json()) as { code: string; data: { trade_no: string; is_idempotent: boolean } | null };
}

async function race(baseUrl: string, app: AppCredentials, databaseUrl: string, o: Options): Promise<Round[]> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  const rounds: Round[] = [];
  const bar = progressBar('race', o.rounds, 'rounds');
  try {
    for (let i = 0; i < o.rounds; i++) {
      const merchantOrderNo = `RACE-${randomUUID()}`;
      const body = JSON.stringify({
        merchant_order_no: merchantOrderNo,
        pay_method: 'qr_code',
        amount: 100,
        subject: 'Race',
        notify_url: 'http://127.0.0.1:9/hook',
      });
      const answers = await Promise.all(
        Array.from({ length: o.creates }, () => createOnce(baseUrl, app, body)),
      );
      const tradeNo = answers.find((a) => a.data)?.data?.trade_no ?? '';
      const channel = await pg.query<{ n: string; requests: string | null }>(
        'SELECT count(*) AS n, SUM(create_requests) AS requests FROM sandbox_orders WHERE trade_no = $1',
        [tradeNo],
      );
      const orders = await pg.query<{ n: string }>(
        'SELECT count(*) AS n FROM orders WHERE app_id = $1 AND merchant_order_no = $2',
        [app.app_id, merchantOrderNo],
      );
      const round: Round = {
        merchantOrderNo,
        codes: [...new Set(answers.map((a) => a.code))],
        firsts: answers.filter((a) => a.data?.is_idempotent === false).length,
        tradeNos: new Set(answers.map((a) => a.data?.trade_no)).size,
        channelOrders: Number(channel.rows[0]!.n),
        channelRequests: Number(channel.rows[0]!.requests ?? 0),
        orders: Number(orders.rows[0]!.n),
      };
      rounds.push(round);
      const bad = rounds.filter((r) => !fine(r)).length;
      bar.update(i + 1, bad ? `${bad} round(s) wrong` : '');
    }
  } finally {
    bar.stop();
    await pg.end();
  }
  return rounds;
}

function fine(r: Round): boolean {
  return (
    r.codes.length === 1 &&
    r.codes[0] === 'success' &&
    r.firsts === 1 &&
    r.tradeNos === 1 &&
    r.channelOrders === 1 &&
    r.channelRequests === 1 &&
    r.orders === 1
  );
}

async function main(): Promise<void> {
  const o = new Command()
    .name('npm run race --')
    .description(
      'Send rounds of identical concurrent creates and count one order, one channel call, one first answer each.',
    )
    .option('--rounds <n>', 'rounds', intOption('--rounds'), 200)
    .option('--creates <n>', 'identical creates sent at once in each round', intOption('--creates'), 10)
    .option(
      '--base-url <url>',
      'a durapay that npm start runs (loopback only), instead of a stack of its own',
    )
    .parse(process.argv)
    .opts<Options>();
  process.once('SIGINT', () => void stopAllStacks().finally(() => process.exit(130)));
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-race-'));
  let stack: Stack | undefined;
  try {
    let rounds: Round[];
    if (o.baseUrl) {
      // The app is created in, and the counts read from, the database npm start uses.
      const config = loadConfig();
      stack = await attachStack({
        baseUrl: assertLoopback(o.baseUrl).origin,
        temporalAddress: config.temporal.address ?? `127.0.0.1:${config.temporal.devServerPort}`,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        purpose: 'race',
        say,
      });
      const running = stack;
      rounds = await withDatabase(config, createLogger({ level: 'warn' }), (_db, url) =>
        race(running.baseUrl, running.app, url, o),
      );
    } else {
      stack = await startOwnStack({ workDir, databaseUrl: process.env.DATABASE_URL, purpose: 'race', say });
      rounds = await race(stack.baseUrl, stack.app, stack.databaseUrl!, o);
    }
    const wrong = rounds.filter((r) => !fine(r));
    console.log(
      `race: ${rounds.length} rounds of ${o.creates} identical creates: ` +
        `${rounds.filter((r) => r.firsts === 1).length} with exactly one is_idempotent false, ` +
        `${rounds.filter((r) => r.channelOrders === 1 && r.channelRequests === 1).length} with one channel order asked for once, ` +
        `${rounds.filter((r) => r.orders === 1).length} with one order in the read model; wrong rounds: ${wrong.length}`,
    );
    for (const r of wrong.slice(0, 10)) console.log(`  wrong: ${JSON.stringify(r)}`);
    process.exitCode = wrong.length === 0 ? 0 : 1;
  } finally {
    await stack?.stop().catch(() => undefined);
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  say(`race failed: ${err instanceof Error ? err.message : String(err)}`);
  void stopAllStacks().finally(() => process.exit(2));
});
