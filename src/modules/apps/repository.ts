import { APP_CHANGES_CHANNEL } from './cache';
import { appModels, type App } from './model';
import { QueryTypes } from 'sequelize';
import type { AppStatus, Scope } from './rules';
import { generateAppId, generateSecret, generateWebhookSecret } from '../../platform/crypto/credentials';
import type { SecretBox } from '../../platform/crypto/secret-box';
import type { Database } from '../../platform/db';
import { keysetAt, keysetPageOf, type KeysetPage, type KeysetResult } from '../../platform/pagination';

/** An app as the rest of the service sees it; secrets only in `AppCredentials`. */
export interface AppRecord {
  appId: string;
  name: string;
  scopes: Scope[];
  status: AppStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface AppCredentials {
  app_id: string;
  secret: string;
  webhook_secret: string;
  scopes: Scope[];
}

export interface AppWithSecret extends AppRecord {
  /** Decrypted signing secret; the HMAC key is its UTF-8 bytes. */
  secret: string;
}

export class AppRepository {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  private get models() {
    return appModels(this.db.sequelize);
  }

  private toRecord(row: App): AppRecord {
    return {
      appId: row.appId,
      name: row.name,
      scopes: row.scopes,
      status: row.status,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }

  async create(name: string, scopes: Scope[]): Promise<AppCredentials> {
    const appId = generateAppId();
    const secret = generateSecret();
    const webhookSecret = generateWebhookSecret();
    await this.models.App.create({
      appId,
      name,
      scopes,
      status: 'active',
      secretCiphertext: this.box.seal(secret, `${appId}:secret`),
      webhookSecretCiphertext: this.box.seal(webhookSecret, `${appId}:webhook_secret`),
    });
    return { app_id: appId, secret, webhook_secret: webhookSecret, scopes };
  }

  async list(): Promise<AppRecord[]> {
    const rows = await this.models.App.findAll({ order: [['createdAt', 'ASC']] });
    return rows.map((r) => this.toRecord(r));
  }

  /** Every app without its secrets, newest first by (created_at, app_id), a keyset page at a time. */
  async search(page: KeysetPage): Promise<KeysetResult<AppRecord>> {
    const after = page.after
      ? 'WHERE (a.created_at, a.app_id) < (CAST(:afterAt AS timestamptz), :afterKey)'
      : '';
    const rows = await this.db.sequelize.query<{
      app_id: string;
      name: string;
      scopes: Scope[];
      status: AppStatus;
      created_at: Date;
      updated_at: Date;
      cursor_at: string;
    }>(
      `SELECT a.app_id, a.name, a.scopes, a.status, a.created_at, a.updated_at,
              ${keysetAt('a.created_at')} AS cursor_at
         FROM apps a ${after} ORDER BY a.created_at DESC, a.app_id DESC LIMIT :limit`,
      {
        replacements: {
          limit: page.limit + 1,
          afterAt: page.after?.at ?? null,
          afterKey: page.after?.key ?? null,
        },
        type: QueryTypes.SELECT,
      },
    );
    const found = keysetPageOf(rows, page.limit, (r) => ({ at: r.cursor_at, key: r.app_id }));
    return {
      rows: found.rows.map((r) => ({
        appId: r.app_id,
        name: r.name,
        scopes: r.scopes,
        status: r.status,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      })),
      next: found.next,
    };
  }

  async count(): Promise<number> {
    return this.models.App.count();
  }

  async find(appId: string): Promise<AppRecord | undefined> {
    const row = await this.models.App.findByPk(appId);
    return row ? this.toRecord(row) : undefined;
  }

  /** The app with its signing secret, for request verification. */
  async findWithSecret(appId: string): Promise<AppWithSecret | undefined> {
    const row = await this.models.App.findByPk(appId);
    if (!row) return undefined;
    return { ...this.toRecord(row), secret: this.box.open(row.secretCiphertext, `${appId}:secret`) };
  }

  async webhookSecret(appId: string): Promise<string | undefined> {
    const row = await this.models.App.findByPk(appId, {
      attributes: ['appId', 'webhookSecretCiphertext'],
    });
    return row ? this.box.open(row.webhookSecretCiphertext, `${appId}:webhook_secret`) : undefined;
  }

  async setStatus(appId: string, status: AppStatus): Promise<boolean> {
    const [count] = await this.models.App.update({ status }, { where: { appId } });
    if (count === 1) await this.announceChange(appId);
    return count === 1;
  }

  /** Called with an app's id once a change of it is committed (this process's cache forgets it). */
  onChange: ((appId: string) => void) | undefined;

  /** Tells every API process that caches apps to read this one again (see cache.ts). */
  private async announceChange(appId: string): Promise<void> {
    // This process at once; the others when Postgres delivers the notification.
    this.onChange?.(appId);
    await this.db.sequelize.query('SELECT pg_notify(:channel, :appId)', {
      replacements: { channel: APP_CHANGES_CHANNEL, appId },
      type: QueryTypes.SELECT,
    });
  }

  /** Replaces the signing secret (or the webhook secret); the old one stops working at once. */
  async rotate(appId: string, which: 'secret' | 'webhook_secret'): Promise<string | undefined> {
    const value = which === 'secret' ? generateSecret() : generateWebhookSecret();
    const column = which === 'secret' ? 'secretCiphertext' : 'webhookSecretCiphertext';
    const [count] = await this.models.App.update(
      { [column]: this.box.seal(value, `${appId}:${which}`) },
      { where: { appId } },
    );
    if (count === 1) await this.announceChange(appId);
    return count === 1 ? value : undefined;
  }
}

export class NonceStore {
  constructor(private readonly db: Database) {}

  async purgeExpired(): Promise<number> {
    const [, result] = await this.db.sequelize.query('DELETE FROM request_nonces WHERE expires_at < now()');
    return (result as { rowCount?: number } | undefined)?.rowCount ?? 0;
  }
}

/**
 * A verified request's nonce and rate-limit step in one statement (one round trip): the nonce is
 * claimed, and only a fresh nonce takes a token from the app's bucket, so a replay costs nothing.
 */
export class RequestAdmission {
  constructor(
    private readonly db: Database,
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  /** Whether the nonce was new, and how many seconds to wait when over the limit (0: go ahead). */
  async admit(
    appId: string,
    nonce: string,
    ttlSeconds: number,
  ): Promise<{ fresh: boolean; retryAfter: number }> {
    const refill = `LEAST(:burst::double precision,
                    b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.updated_at) * :rate)`;
    const [row] = await this.db.sequelize.query<{
      fresh: boolean;
      tokens: number | null;
      allowed: boolean | null;
    }>(
      `WITH claimed AS (
         INSERT INTO request_nonces (app_id, nonce, expires_at)
         VALUES (:appId, :nonce, now() + make_interval(secs => :ttl))
         ON CONFLICT (app_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
           WHERE request_nonces.expires_at < now()
         RETURNING 1
       ), bucket AS (
         INSERT INTO rate_limit_buckets AS b (app_id, tokens, allowed, updated_at)
         SELECT :appId, :burst - 1, true, clock_timestamp() WHERE EXISTS (SELECT 1 FROM claimed)
         ON CONFLICT (app_id) DO UPDATE SET
           tokens = CASE WHEN ${refill} >= 1 THEN ${refill} - 1 ELSE ${refill} END,
           allowed = ${refill} >= 1,
           updated_at = clock_timestamp()
         RETURNING b.tokens, b.allowed
       )
       SELECT EXISTS (SELECT 1 FROM claimed) AS fresh,
              (SELECT tokens FROM bucket) AS tokens,
              (SELECT allowed FROM bucket) AS allowed`,
      {
        replacements: { appId, nonce, ttl: ttlSeconds, burst: this.burst, rate: this.perSecond },
        type: QueryTypes.SELECT,
      },
    );
    if (!row?.fresh) return { fresh: false, retryAfter: 0 };
    if (row.allowed !== false) return { fresh: true, retryAfter: 0 };
    return { fresh: true, retryAfter: Math.max(1, Math.ceil((1 - Number(row.tokens)) / this.perSecond)) };
  }
}
