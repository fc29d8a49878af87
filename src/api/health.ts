import type { Response, Router } from 'express';
import { AppError } from '../platform/errors';
import { sendData, sendError } from '../platform/http/envelope';
import { apiRouter } from '../platform/http/router';
import type { Logger } from '../platform/logger';

export type Probe = () => Promise<void>;

export interface ReadinessProbes {
  database: Probe;
  temporal: Probe;
}

const PROBE_TIMEOUT_MS = 3_000;

/** A driver's words with any `user:password@` of a URL in them masked. */
function withoutCredentials(text: string): string {
  return text.replace(/\/\/([^:/@\s]+):[^@\s]*@/g, '//$1:***@');
}

/** Undefined when the dependency answered in time; else why not, for the log only. */
async function runProbe(probe: Probe): Promise<string | undefined> {
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
    return undefined;
  } catch (err) {
    return withoutCredentials(err instanceof Error ? err.message : String(err));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/livez` (and `/healthz`, as before): the process is alive. `/readyz`: it can do its work (database and Temporal answer).
 * A dependency that does not answer is named, `database down`, and nothing more: the driver's
 * words carry internal addresses and go to the log (SPEC §9).
 */
export function healthRoutes(probes: ReadinessProbes): Router {
  const router = apiRouter();
  const alive = (_req: unknown, res: Response) => sendData(res, { status: 'ok' });
  router.get('/livez', alive);
  router.get('/healthz', alive);
  router.get('/readyz', async (_req, res) => {
    const names = Object.keys(probes) as (keyof ReadinessProbes)[];
    const failures = await Promise.all(names.map((name) => runProbe(probes[name])));
    const down = names.filter((_, i) => failures[i] !== undefined);
    if (down.length === 0) return sendData(res, { status: 'ready', database: 'ok', temporal: 'ok' });
    names.forEach((name, i) => {
      if (failures[i] !== undefined) {
        (res.locals.log as Logger).warn('readiness probe failed', { dependency: name, error: failures[i] });
      }
    });
    sendError(
      res,
      new AppError('internal_system', `not ready: ${down.map((name) => `${name} down`).join(', ')}`, 503),
    );
  });
  return router;
}
