import path from 'node:path';
import { runningPostmaster, startEmbeddedPostgres } from '../dev/embedded-postgres';
import { boot } from '../boot';
import { fail } from '../config';

/** `durapay postgres`. */
export async function postgres(opts: { dataDir?: string; port?: string; database: string }): Promise<void> {
  const { config, logger } = boot('postgres');
  const pg = await startEmbeddedPostgres({
    dataDir: path.resolve(opts.dataDir ?? path.join(config.dataDir, 'postgres')),
    port: opts.port ? Number(opts.port) : config.database.embeddedPort,
    database: opts.database,
    logger,
  }).catch(fail);
  process.stdout.write(`${JSON.stringify({ url: pg.url })}\n`);
  let stopping = false;
  const stop = async () => {
    stopping = true;
    await pg.stop();
    process.exit(0);
  };
  // A postmaster that dies (killed, out of memory) takes this process with it, so that the
  // supervisor sees the exit and starts Postgres again instead of serving errors.
  const dataDir = path.resolve(opts.dataDir ?? path.join(config.dataDir, 'postgres'));
  setInterval(() => {
    if (stopping || runningPostmaster(dataDir)) return;
    logger.error('the Postgres server process is gone; exiting so that it can be started again', {
      data_dir: dataDir,
    });
    process.exit(1);
  }, 500).unref();
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.once('disconnect', () => void stop());
}
