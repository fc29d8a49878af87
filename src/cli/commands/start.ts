import { ensureConsoleBuilt } from '../../platform/console-build';
import { boot } from '../boot';
import { runStart } from '../start';

/** `durapay start`. */
export async function start(): Promise<void> {
  const { config, logger } = boot('supervisor');
  const say = (line: string) => process.stderr.write(`${line}\n`);
  // The API serves console/dist at /console: a fresh clone or changed console sources build it.
  await ensureConsoleBuilt(say).catch((err: unknown) =>
    say(`Could not build the operator console (console/dist is left as it was): ${(err as Error).message}`),
  );
  await runStart(config, logger);
}
