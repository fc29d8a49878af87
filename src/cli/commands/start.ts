import { ensureConsoleBuilt } from '../../platform/console-build';
import type * as ConsoleApi from '../dev/console-api';
import { boot } from '../boot';
import { runStart } from '../start';

/** `durapay start`. */
export async function start(): Promise<void> {
  const { config, logger } = boot('supervisor');
  const say = (line: string) => process.stderr.write(`${line}\n`);
  // The API serves console/dist at /console: a fresh clone or changed console sources build it.
  // Its client is generated from the console's API document first (a devDependency's work: only
  // in a checkout, where the console's sources are).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when it runs (see ../lazy)
  const prepare = () => (require('../dev/console-api') as typeof ConsoleApi).writeConsoleApi();
  await ensureConsoleBuilt(say, undefined, prepare).catch((err: unknown) =>
    say(`Could not build the operator console (console/dist is left as it was): ${(err as Error).message}`),
  );
  await runStart(config, logger);
}
