import { Op, QueryTypes, type WhereOptions } from 'sequelize';
import { notificationBody, type NotificationRequest, type NotificationStatus } from './rules';
import { generateNotificationId } from '../../platform/ids';
import type { Database } from '../../platform/db';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetPosition,
  type KeysetResult,
} from '../../platform/pagination';
import { notificationModels, type Notification, type NotificationAttempt } from './model';

/** The series token of the attempt a publisher makes before any delivery workflow runs. */
export const PUBLISH_SERIES_TOKEN = 'publish';

export interface AttemptRecord {
  series: number;
  attempt: number;
  attemptedAt: Date;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}

export interface NotificationFilter {
  tradeNo?: string;
  refundNo?: string;
  status?: NotificationStatus;
}

/** What an operator looks notifications up by, across apps (the console); every field narrows. */
export interface NotificationSearch {
  /** Absent: every status, the failed ones first. */
  status?: NotificationStatus;
  tradeNo?: string;
  refundNo?: string;
  appId?: string;
  event?: string;
}

/** Where a notification read by search stands in its list. */
const positionOf = (n: Notification): KeysetPosition => ({
  at: n.get('cursor_at') as string,
  key: n.notificationId,
});

export class NotificationRepository {
  constructor(private readonly db: Database) {}

  private get models() {
    return notificationModels(this.db.sequelize);
  }

  /** Stores the notification once per (app, event key); returns its id either way. */
  async insertOrGet(req: NotificationRequest): Promise<{ notificationId: string; created: boolean }> {
    const rows = await this.db.sequelize.query<{ notification_id: string }>(
      `INSERT INTO notifications (notification_id, app_id, event_key, event_type, trade_no, refund_no,
                                  application_id, url, body, status, created_at, updated_at)
       VALUES (:id, :appId, :eventKey, :type, :tradeNo, :refundNo, :applicationId, :url, :body, 'pending', now(), now())
       ON CONFLICT (app_id, event_key) DO NOTHING
       RETURNING notification_id`,
      {
        replacements: {
          id: generateNotificationId(),
          appId: req.appId,
          eventKey: req.eventKey,
          type: req.type,
          tradeNo: req.tradeNo ?? null,
          refundNo: req.refundNo ?? null,
          applicationId: req.applicationId ?? null,
          url: req.url,
          body: notificationBody(req),
        },
        type: QueryTypes.SELECT,
      },
    );
    if (rows[0]) return { notificationId: rows[0].notification_id, created: true };
    const existing = await this.models.Notification.findOne({
      where: { appId: req.appId, eventKey: req.eventKey },
      attributes: ['notificationId'],
    });
    if (!existing) throw new Error(`notification for ${req.eventKey} vanished during insert`);
    return { notificationId: existing.notificationId, created: false };
  }

  async find(appId: string, notificationId: string): Promise<Notification | null> {
    return this.models.Notification.findOne({
      where: { appId, notificationId },
      include: [{ association: 'attempts' }],
    });
  }

  async list(appId: string, filter: NotificationFilter, page: { limit: number; offset: number }) {
    const where: WhereOptions = { appId };
    if (filter.tradeNo !== undefined) Object.assign(where, { tradeNo: filter.tradeNo });
    if (filter.refundNo !== undefined) Object.assign(where, { refundNo: filter.refundNo });
    if (filter.status !== undefined) Object.assign(where, { status: filter.status });
    // Page over notifications first, then fetch their attempts: a join would page over attempts.
    const rows = await this.models.Notification.findAll({
      where,
      order: [
        ['createdAt', 'DESC'],
        ['notificationId', 'DESC'],
      ],
      limit: page.limit,
      offset: page.offset,
    });
    if (rows.length === 0) return [];
    const attempts = await this.models.NotificationAttempt.findAll({
      where: { notificationId: { [Op.in]: rows.map((r) => r.notificationId) } },
    });
    for (const row of rows) row.attempts = attempts.filter((a) => a.notificationId === row.notificationId);
    return rows;
  }

  /** A notification of any app, with its attempts (the console). */
  async findById(notificationId: string): Promise<Notification | null> {
    return this.models.Notification.findOne({
      where: { notificationId },
      include: [{ association: 'attempts' }],
    });
  }

  /** The notifications of an order (its payment's and its refunds'), oldest first, with their attempts. */
  async ofTrade(appId: string, tradeNo: string): Promise<Notification[]> {
    return this.models.Notification.findAll({
      where: { appId, tradeNo },
      include: [{ association: 'attempts' }],
      order: [
        ['createdAt', 'ASC'],
        ['notificationId', 'ASC'],
      ],
    });
  }

  /** The notifications of a merchant application (one per change of it), oldest first. */
  async ofApplication(appId: string, applicationId: string): Promise<Notification[]> {
    return this.models.Notification.findAll({
      where: { appId, applicationId },
      order: [
        ['createdAt', 'ASC'],
        ['notificationId', 'ASC'],
      ],
    });
  }

  /** How many notifications are in `status` now (the console's exceptions: `failed`). */
  async countInStatus(status: NotificationStatus): Promise<number> {
    return this.models.Notification.count({ where: { status } });
  }

  /**
   * Notifications of every app, newest first by (created_at, notification_id), a keyset page at a
   * time, without their attempts. With no status asked, the failed ones come first (rank 1),
   * then the rest (rank 0): each part is read on its own, through its own index.
   */
  async search(filter: NotificationSearch, page: KeysetPage): Promise<KeysetResult<Notification>> {
    if (filter.status !== undefined) {
      const rows = await this.searchPart(filter, filter.status, page, undefined);
      return keysetPageOf(rows, page.limit, (n) => positionOf(n));
    }
    // One row beyond the page, from the failed ones and then from the rest, says whether
    // another page follows; a position among the failed ones is no place among the rest, which
    // are then read from their newest.
    const failed = page.after?.rank === 0 ? [] : await this.searchPart(filter, 'failed', page, 1);
    const rest =
      failed.length > page.limit
        ? []
        : await this.searchPart(filter, 'not_failed', { ...page, limit: page.limit - failed.length }, 0);
    const ranks = new Map<Notification, number>([
      ...failed.map((n) => [n, 1] as const),
      ...rest.map((n) => [n, 0] as const),
    ]);
    return keysetPageOf([...failed, ...rest], page.limit, (n) => ({ ...positionOf(n), rank: ranks.get(n)! }));
  }

  /** Up to `page.limit + 1` notifications of one part (a status, or every one but failed). */
  private async searchPart(
    filter: NotificationSearch,
    status: NotificationStatus | 'not_failed',
    page: KeysetPage,
    rank: number | undefined,
  ): Promise<Notification[]> {
    const where = new SearchConditions({ limit: page.limit + 1 })
      .equals('n.status', 'status', status === 'not_failed' ? undefined : status)
      .equals('n.trade_no', 'tradeNo', filter.tradeNo)
      .equals('n.refund_no', 'refundNo', filter.refundNo)
      .equals('n.app_id', 'appId', filter.appId)
      .equals('n.event_type', 'event', filter.event);
    if (status === 'not_failed') where.where("n.status <> 'failed'");
    // A position of the other group (failed first, then the rest) does not bound this one.
    if (rank === undefined || (page.after?.rank ?? 1) === rank)
      where.after(
        'n.created_at',
        [{ column: 'n.notification_id', value: page.after?.key ?? '' }],
        page.after?.at,
      );
    return this.db.sequelize.query(
      `SELECT n.*, ${keysetAt('n.created_at')} AS cursor_at FROM notifications n ${where.sql()}
        ORDER BY n.created_at DESC, n.notification_id DESC LIMIT :limit`,
      { replacements: where.replacements, model: this.models.Notification, mapToModel: true },
    );
  }

  /** For delivery: what to send, where, for which app. */
  async loadForDelivery(notificationId: string) {
    return this.models.Notification.findByPk(notificationId, {
      attributes: ['notificationId', 'appId', 'eventType', 'url', 'body', 'status'],
    });
  }

  /**
   * Opens a new attempt series and returns its number. The token (workflow run + series
   * counter) makes a retried call return the series it already opened.
   */
  async beginSeries(notificationId: string, token: string): Promise<number> {
    const [row] = await this.db.sequelize.query<{ series: number }>(
      `UPDATE notifications
          SET series = CASE WHEN series_token IS DISTINCT FROM :token THEN series + 1 ELSE series END,
              attempt_count = CASE WHEN series_token IS DISTINCT FROM :token THEN 0 ELSE attempt_count END,
              status = CASE WHEN series_token IS DISTINCT FROM :token THEN 'pending' ELSE status END,
              next_attempt_at = CASE WHEN series_token IS DISTINCT FROM :token THEN now() ELSE next_attempt_at END,
              series_token = :token,
              updated_at = now()
        WHERE notification_id = :notificationId
        RETURNING series`,
      { replacements: { notificationId, token }, type: QueryTypes.SELECT },
    );
    if (!row) throw new Error(`notification ${notificationId} does not exist`);
    return row.series;
  }

  /**
   * Opens the first attempt series for the publisher's own first attempt (token `publish`) and
   * returns its number; a publish retried later finds the same series. Returns null when the
   * series belongs to a delivery workflow instead: one opened by a workflow (a resend), or a
   * notification stored before this publisher made first attempts (`stored` false and no token).
   */
  async claimFirstSeries(notificationId: string, stored: boolean): Promise<number | null> {
    const [row] = await this.db.sequelize.query<{ series: number }>(
      `UPDATE notifications
          SET series = CASE WHEN series_token IS NULL THEN series + 1 ELSE series END,
              series_token = :token,
              updated_at = now()
        WHERE notification_id = :notificationId
          AND (series_token = :token OR (series_token IS NULL AND :stored))
        RETURNING series`,
      { replacements: { notificationId, token: PUBLISH_SERIES_TOKEN, stored }, type: QueryTypes.SELECT },
    );
    return row?.series ?? null;
  }

  async findAttempt(
    notificationId: string,
    series: number,
    attempt: number,
  ): Promise<NotificationAttempt | null> {
    return this.models.NotificationAttempt.findOne({ where: { notificationId, series, attempt } });
  }

  /**
   * Records one attempt and moves the notification on, in one transaction; a second call for
   * the same attempt changes nothing. Whether this call recorded it.
   */
  async recordAttempt(
    notificationId: string,
    attempt: AttemptRecord & { responseExcerpt: string | null },
    outcome: { status: NotificationStatus; nextAttemptAt: Date | null },
  ): Promise<boolean> {
    return this.db.sequelize.transaction(async (transaction) => {
      const inserted = await this.db.sequelize.query(
        `INSERT INTO notification_attempts (notification_id, series, attempt, attempted_at, http_status, latency_ms, error, response_excerpt)
         VALUES (:notificationId, :series, :attempt, :attemptedAt, :httpStatus, :latencyMs, :error, :responseExcerpt)
         ON CONFLICT (notification_id, series, attempt) DO NOTHING
         RETURNING id`,
        {
          replacements: { notificationId, ...attempt },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      if (inserted.length === 0) return false;
      await this.db.sequelize.query(
        `UPDATE notifications
            SET attempt_count = GREATEST(attempt_count, :attempt),
                status = :status,
                next_attempt_at = :nextAttemptAt,
                last_error = :lastError,
                delivered_at = CASE WHEN :status = 'delivered' THEN :attemptedAt ELSE delivered_at END,
                updated_at = now()
          WHERE notification_id = :notificationId AND series = :series`,
        {
          replacements: {
            notificationId,
            series: attempt.series,
            attempt: attempt.attempt,
            status: outcome.status,
            nextAttemptAt: outcome.nextAttemptAt,
            lastError:
              outcome.status === 'delivered'
                ? null
                : (attempt.error ?? (attempt.httpStatus === null ? null : `HTTP ${attempt.httpStatus}`)),
            attemptedAt: attempt.attemptedAt,
          },
          transaction,
        },
      );
      return true;
    });
  }
}
