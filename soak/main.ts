/**
 * `npm run soak`: the long profiles of the suites that `npm test` runs short — what a person runs
 * before a release or after a change to how money moves, and `.ci/run` runs when DURAPAY_SOAK=1.
 * Each step is a command of its own, run one after another on a machine of its own; a step that
 * fails does not stop the next. It exits non-zero when any step failed. See docs/testing.md.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Command } from 'commander';
import { say } from '../bench/lib/cli';

const ROOT = path.join(__dirname, '..');

interface Step {
  name: string;
  what: string;
  command: string[];
  env?: Record<string, string>;
}

/** The steps, each the long profile of a suite `npm test` runs short (docs/testing.md). */
function steps(seed: number): Step[] {
  const tsx = (script: string, args: string[]) => [
    process.execPath,
    '--require',
    'tsx/cjs',
    path.join(ROOT, script),
    ...args,
  ];
  const jest = (file: string) => [
    process.execPath,
    path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--runInBand',
    file,
  ];
  return [
    {
      name: 'chaos',
      what: '300 s of load, each of worker, API, Temporal and Postgres killed 4 times',
      command: tsx('chaos/main.ts', [
        '--duration',
        '300',
        '--kills',
        '4',
        '--min-orders',
        '100',
        '--seed',
        String(seed),
      ]),
    },
    {
      name: 'chaos-sharing',
      what: 'shares and refunds, the worker killed twice at each point of a share and a refund',
      command: tsx('chaos/main.ts', [
        ...['--scenario', 'sharing', '--duration', '180', '--kills', '2', '--min-orders', '40'],
        ...['--seed', String(seed)],
      ]),
    },
    {
      name: 'chaos-transfers',
      what: "payouts, the worker killed twice at each point of a transfer's create",
      command: tsx('chaos/main.ts', [
        ...['--scenario', 'transfers', '--duration', '180', '--kills', '2', '--min-orders', '80'],
        ...['--seed', String(seed)],
      ]),
    },
    {
      name: 'fuzz',
      what: '10 000 generated requests over every endpoint',
      command: tsx('fuzz/main.ts', ['--requests', '10000', '--seed', String(seed)]),
    },
    {
      name: 'model',
      what: '200 generated order histories (npm test: 25)',
      command: jest('test/integration/model.test.ts'),
      env: { MODEL_RUNS: '200' },
    },
    {
      name: 'concurrency',
      what: 'every race for 100 rounds (npm test: 20)',
      command: jest('test/integration/concurrency.test.ts'),
      env: { CONCURRENCY_ROUNDS: '100' },
    },
  ];
}

function run(step: Step): Promise<number> {
  const [bin, ...args] = step.command;
  const child = spawn(bin!, args, { cwd: ROOT, env: { ...process.env, ...step.env }, stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

async function main(): Promise<void> {
  const all = steps(0);
  const program = new Command()
    .name('npm run soak --')
    .description('The long profiles of chaos, fuzz, the model and the races, one after another.')
    .option('--only <names>', `comma-separated steps of: ${all.map((s) => s.name).join(', ')}`)
    .option('--seed <n>', 'seed of the chaos and fuzz steps (default: a new one)')
    .parse(process.argv);
  const opts = program.opts<{ only?: string; seed?: string }>();
  const seed = opts.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(opts.seed);
  if (!Number.isInteger(seed) || seed < 0) program.error('--seed must be a whole number');
  const only = opts.only?.split(',').map((s) => s.trim());
  const unknown = only?.filter((n) => !all.some((s) => s.name === n)) ?? [];
  if (unknown.length > 0) program.error(`no step named ${unknown.join(', ')}`);

  const chosen = steps(seed).filter((s) => !only || only.includes(s.name));
  const results: { step: Step; code: number; seconds: number }[] = [];
  say(`soak: seed ${seed}, ${chosen.length} steps`);
  for (const step of chosen) {
    say(`\nsoak: ${step.name}: ${step.what}`);
    const started = Date.now();
    const code = await run(step);
    results.push({ step, code, seconds: (Date.now() - started) / 1000 });
  }
  const lines = [
    '',
    `soak: seed ${seed}`,
    '| step | what | result | s |',
    '| --- | --- | --- | ---: |',
    ...results.map(
      (r) =>
        `| ${r.step.name} | ${r.step.what} | ${r.code === 0 ? 'passed' : `failed (${r.code})`} | ${r.seconds.toFixed(0)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const failed = results.filter((r) => r.code !== 0).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  process.exitCode = failed > 0 ? 1 : 0;
}

void main();
