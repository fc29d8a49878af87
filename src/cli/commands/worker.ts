import { runWorkerProcess } from '../../worker/main';
import { boot } from '../boot';
import { fail } from '../config';

/** `durapay worker`. */
export async function worker(): Promise<void> {
  const { config, logger } = boot('worker');
  await runWorkerProcess(config, logger).catch(fail);
  process.exit(0);
}
