import { spawn } from 'node:child_process';
import path from 'node:path';
import { compiledTool } from './compiled';
import { globalState } from './state';

const ROOT = path.join(__dirname, '..', '..');

/**
 * Runs one of the repository's TypeScript tools (`bench/main.ts`, `fuzz/main.ts`, …) as `npm run`
 * would, against the tests' Temporal CLI and Postgres, and collects what it printed. It runs the
 * tool as compiled once for the test run (./compiled.ts), so the stacks it starts run compiled
 * `durapay` processes too; their workers load the test run's workflow bundle
 * (DURAPAY_WORKFLOW_BUNDLE, as the Docker image's workers load theirs) instead of running webpack
 * at every start and restart.
 */
export function runTool(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { cliPath, adminUrl, bundlePath, compiled } = globalState();
  const child = spawn(process.execPath, [compiledTool(compiled.root, script), ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_CLI_PATH: cliPath,
      DATABASE_URL: adminUrl,
      DURAPAY_WORKFLOW_BUNDLE: bundlePath,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}
