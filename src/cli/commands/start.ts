import { boot } from '../boot';
import { runStart } from '../start';

/** `durapay start`. */
export async function start(): Promise<void> {
  const { config, logger } = boot('supervisor');
  await runStart(config, logger);
}
