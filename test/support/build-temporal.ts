/**
 * Builds the Temporal CLI and server the tests run (the same step as the tests' global setup,
 * which finds them cached afterwards). `.ci/run` starts it in the background on a fresh machine,
 * so that the one-time Go builds overlap installing, linting and type-checking.
 */
import { loadConfig } from '../../src/config';
import { ensureTemporalCli } from '../../src/cli/dev/temporal-cli';
import { ensureTemporalServer } from '../../src/cli/dev/temporal-server';

const say = (line: string) => process.stderr.write(`[temporal build] ${line}\n`);
const config = loadConfig();
Promise.all([
  ensureTemporalCli({ cliPath: config.temporal.cliPath, cacheDir: config.cacheDir }, say),
  ensureTemporalServer(config.cacheDir, say),
]).then(
  () => say('ready'),
  (err: unknown) => {
    say(`failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
