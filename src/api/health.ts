import type { Router } from 'express';
import { AppError } from '../platform/errors';
import { sendData, sendError } from '../platform/http/envelope';
import { apiRouter } from '../platform/http/router';

export type Probe = () => Promise<void>;

export interface ReadinessProbes {
  database: Probe;
  temporal: Probe;
}

const PROBE_TIMEOUT_MS = 3_000;

async function runProbe(probe: Probe): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)),
          PROBE_TIMEOUT_MS,
        );
      }),
    ]);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz`: the process is alive. `/readyz`: it can do its work (database and Temporal answer). */
export function healthRoutes(probes: ReadinessProbes): Router {
  const router = apiRouter();
  router.get('/healthz', (_req, res) => sendData(res, { status: 'ok' }));
  router.get('/readyz', async (_req, res) => {
    const [database, temporal] = await Promise.all([runProbe(probes.database), runProbe(probes.temporal)]);
    if (database === 'ok' && temporal === 'ok') return sendData(res, { status: 'ready', database, temporal });
    const reasons = [
      database === 'ok' ? undefined : `database unreachable (${database})`,
      temporal === 'ok' ? undefined : `temporal unreachable (${temporal})`,
    ].filter(Boolean);
    sendError(res, new AppError('internal_system', `not ready: ${reasons.join('; ')}`, 503));
  });
  return router;
}
