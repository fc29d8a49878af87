import { runApi } from '../../api/server';
import { boot } from '../boot';
import { fail } from '../config';

/** `durapay api`. */
export async function api(): Promise<void> {
  const { config, logger } = boot('api');
  const server = await runApi(config, logger).catch(fail);
  const stop = async () => {
    logger.info('api stopping');
    await server.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.once('disconnect', () => void stop());
}
