/**
 * The apps every request is verified against, kept in memory by each API process so that a
 * request does not read its app (and decrypt its secret) from Postgres. Every change that must
 * take effect at once (disable, enable, a rotated secret) is announced by Postgres NOTIFY on
 * APP_CHANGES_CHANNEL, which every API process LISTENs to; an entry also expires after a short
 * time, the bound on staleness if a notification were ever missed. While the listening connection
 * is down, nothing is cached.
 */
import { Client } from 'pg';
import type { Database } from '../../platform/db';
import type { Logger } from '../../platform/logger';
import type { AppWithSecret } from './repository';

/** The NOTIFY channel a change of an app is announced on; the payload is its app_id. */
export const APP_CHANGES_CHANNEL = 'durapay_app_changes';

/** How long an entry is believed without a notification. */
const DEFAULT_TTL_MS = 10_000;
/** Enough for every app of a deployment; beyond it the oldest entries go. */
const MAX_ENTRIES = 10_000;

export interface AppSource {
  findWithSecret(appId: string): Promise<AppWithSecret | undefined>;
}

export class AppCache implements AppSource {
  private readonly entries = new Map<string, { app: AppWithSecret; at: number }>();
  /** Bumped by every invalidation: a read that began before one is not cached. */
  private generation = 0;
  /** True only while changes are being heard. */
  private listening = false;

  constructor(
    private readonly source: AppSource,
    private readonly ttlMs = DEFAULT_TTL_MS,
  ) {}

  async findWithSecret(appId: string): Promise<AppWithSecret | undefined> {
    const hit = this.entries.get(appId);
    if (hit && this.listening && Date.now() - hit.at < this.ttlMs) return hit.app;
    const generation = this.generation;
    const app = await this.source.findWithSecret(appId);
    // Unknown ids are not remembered: a new app is usable at once, and junk ids take no memory.
    if (app && this.listening && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(appId, { app, at: Date.now() });
    }
    return app;
  }

  /** Forgets one app, or every app. */
  invalidate(appId?: string): void {
    this.generation += 1;
    if (appId === undefined) this.entries.clear();
    else this.entries.delete(appId);
  }

  /** Whether changes are heard; entries are kept and served only while they are. */
  setListening(listening: boolean): void {
    if (!listening) this.invalidate();
    this.listening = listening;
  }
}

/**
 * LISTENs for app changes on a connection of its own and applies them to `cache`; reconnects
 * after a failure, caching nothing meanwhile. Answers a function that stops listening.
 */
export function listenForAppChanges(db: Database, cache: AppCache, logger: Logger): () => Promise<void> {
  const { host, port, database, username, password } = db.sequelize.config;
  let client: Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const c = new Client({
      host,
      port: port === undefined ? undefined : Number(port),
      database,
      user: username,
      password: password ?? undefined,
      keepAlive: true,
    });
    client = c;
    const lost = (err?: unknown) => {
      if (client !== c) return;
      cache.setListening(false);
      client = undefined;
      c.removeAllListeners();
      void c.end().catch(() => undefined);
      if (stopped) return;
      if (err)
        logger.warn('app change listener lost; apps are read per request until it is back', {
          error: String(err),
        });
      retry = setTimeout(() => void connect(), 1_000);
      retry.unref();
    };
    c.on('error', lost);
    c.on('end', () => lost(new Error('connection ended')));
    c.on('notification', (n) => {
      if (n.channel === APP_CHANGES_CHANNEL) cache.invalidate(n.payload || undefined);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${APP_CHANGES_CHANNEL}`);
      // Whatever changed while nobody listened is read again.
      cache.invalidate();
      if (client === c && !stopped) cache.setListening(true);
    } catch (err) {
      lost(err);
    }
  };
  void connect();

  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    cache.setListening(false);
    const c = client;
    client = undefined;
    if (c) {
      c.removeAllListeners();
      await c.end().catch(() => undefined);
    }
  };
}
