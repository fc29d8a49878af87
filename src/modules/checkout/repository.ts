/**
 * The hosted checkout's tables (SPEC §15): payment links, the holds that keep a link from taking
 * more payments than it may, and the sign-in states. Raw SQL, like the transfers' repository:
 * the hold is a row lock and a count, which an ORM would only hide.
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../../platform/db';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetResult,
} from '../../platform/pagination';
import { LINK_HOLD_STALE_MS } from './rules';

export interface PaymentLink {
  linkId: string;
  appId: string;
  merchantLinkNo: string;
  merchantId: string | null;
  amount: number;
  subject: string;
  notifyUrl: string;
  expiresAt: Date | null;
  maxPayments: number;
  status: 'active' | 'deactivated';
  deactivatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewPaymentLink = Pick<
  PaymentLink,
  | 'linkId'
  | 'appId'
  | 'merchantLinkNo'
  | 'merchantId'
  | 'amount'
  | 'subject'
  | 'notifyUrl'
  | 'expiresAt'
  | 'maxPayments'
>;

/** A link with how many of its orders are paid (refunded ones included: they were paid). */
export type CountedLink = PaymentLink & { paidCount: number };

const LINK_COLUMNS = `l.link_id AS "linkId", l.app_id AS "appId", l.merchant_link_no AS "merchantLinkNo",
  l.merchant_id AS "merchantId", l.amount::float8 AS amount, l.subject, l.notify_url AS "notifyUrl",
  l.expires_at AS "expiresAt", l.max_payments AS "maxPayments", l.status, l.deactivated_at AS "deactivatedAt",
  l.created_at AS "createdAt", l.updated_at AS "updatedAt",
  (SELECT count(*)::int FROM orders o WHERE o.payment_link_id = l.link_id
     AND o.status IN ('paid', 'partially_refunded', 'refunded')) AS "paidCount"`;

export interface SignInState {
  nonce: string;
  kind: 'link' | 'order' | 'code';
  ref: string;
  channelCode: string;
  /** A standing code's: the amount and note its buyer entered. */
  amount?: number | null;
  note?: string | null;
}

/** A merchant's standing QR code (码牌). */
export interface MerchantCode {
  codeId: string;
  appId: string;
  merchantId: string;
  name: string;
  notifyUrl: string;
  minAmount: number;
  maxAmount: number;
  status: 'active' | 'disabled';
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const CODE_COLUMNS = `code_id AS "codeId", app_id AS "appId", merchant_id AS "merchantId", name,
  notify_url AS "notifyUrl", min_amount::float8 AS "minAmount", max_amount::float8 AS "maxAmount", status,
  disabled_at AS "disabledAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

export class CheckoutRepository {
  constructor(private readonly db: Database) {}

  private select<T extends object>(sql: string, replacements: Record<string, unknown>): Promise<T[]> {
    return this.db.sequelize.query<T>(sql, { type: QueryTypes.SELECT, replacements });
  }

  /** Inserts the link; null when the app already has one of this merchant_link_no. */
  async insertLink(l: NewPaymentLink): Promise<boolean> {
    const rows = await this.select<{ link_id: string }>(
      `INSERT INTO payment_links (link_id, app_id, merchant_link_no, merchant_id, amount, subject, notify_url,
                                  expires_at, max_payments)
       VALUES (:linkId, :appId, :merchantLinkNo, :merchantId, :amount, :subject, :notifyUrl, :expiresAt, :maxPayments)
       ON CONFLICT (app_id, merchant_link_no) DO NOTHING
       RETURNING link_id`,
      { ...l, expiresAt: l.expiresAt?.toISOString() ?? null },
    );
    return rows.length > 0;
  }

  async findLink(linkId: string): Promise<CountedLink | null> {
    const [row] = await this.select<CountedLink>(
      `SELECT ${LINK_COLUMNS} FROM payment_links l WHERE l.link_id = :linkId`,
      { linkId },
    );
    return row ?? null;
  }

  async findLinkOfApp(appId: string, linkId: string): Promise<CountedLink | null> {
    const link = await this.findLink(linkId);
    return link && link.appId === appId ? link : null;
  }

  async findByMerchantLinkNo(appId: string, merchantLinkNo: string): Promise<CountedLink | null> {
    const [row] = await this.select<CountedLink>(
      `SELECT ${LINK_COLUMNS} FROM payment_links l WHERE l.app_id = :appId AND l.merchant_link_no = :merchantLinkNo`,
      { appId, merchantLinkNo },
    );
    return row ?? null;
  }

  /** The app's links, newest first, by offset; `total` counts them all. */
  async listLinks(
    appId: string,
    filter: { status?: 'active' | 'deactivated'; merchantId?: string },
    page: { limit: number; offset: number },
  ): Promise<{ rows: CountedLink[]; total: number }> {
    const where = [
      'l.app_id = :appId',
      ...(filter.status ? ['l.status = :status'] : []),
      ...(filter.merchantId ? ['l.merchant_id = :merchantId'] : []),
    ].join(' AND ');
    const replacements = { appId, status: filter.status ?? null, merchantId: filter.merchantId ?? null };
    const rows = await this.select<CountedLink>(
      `SELECT ${LINK_COLUMNS} FROM payment_links l WHERE ${where}
        ORDER BY l.created_at DESC, l.link_id DESC LIMIT :limit OFFSET :offset`,
      { ...replacements, ...page },
    );
    const [count] = await this.select<{ total: number }>(
      `SELECT count(*)::int AS total FROM payment_links l WHERE ${where}`,
      replacements,
    );
    return { rows, total: count?.total ?? 0 };
  }

  /** Every app's links for the console, newest first, in keyset pages. */
  async searchLinks(
    filter: { appId?: string; status?: 'active' | 'deactivated'; merchantId?: string },
    page: KeysetPage,
  ): Promise<KeysetResult<CountedLink>> {
    const where = new SearchConditions({ limit: page.limit + 1 })
      .equals('l.app_id', 'appId', filter.appId)
      .equals('l.status', 'status', filter.status)
      .equals('l.merchant_id', 'merchantId', filter.merchantId)
      .after('l.created_at', [{ column: 'l.link_id', value: page.after?.key ?? '' }], page.after?.at);
    const rows = await this.select<CountedLink & { cursorAt: string }>(
      `SELECT ${LINK_COLUMNS}, ${keysetAt('l.created_at')} AS "cursorAt" FROM payment_links l ${where.sql()}
        ORDER BY l.created_at DESC, l.link_id DESC LIMIT :limit`,
      where.replacements,
    );
    const found = keysetPageOf(rows, page.limit, (l) => ({ at: l.cursorAt, key: l.linkId }));
    return { rows: found.rows.map(({ cursorAt: _at, ...l }) => l), next: found.next };
  }

  /** Deactivates the link (again: nothing changes); false when the app has no such link. */
  async deactivate(appId: string, linkId: string): Promise<boolean> {
    const rows = await this.select<{ link_id: string }>(
      `UPDATE payment_links SET status = 'deactivated', deactivated_at = coalesce(deactivated_at, now()),
              updated_at = CASE WHEN status = 'deactivated' THEN updated_at ELSE now() END
        WHERE app_id = :appId AND link_id = :linkId
        RETURNING link_id`,
      { appId, linkId },
    );
    return rows.length > 0;
  }

  /**
   * Takes one of the link's places for a buyer's order, under the link row's lock, when its
   * pending and paid orders and the holds of orders being made leave one: the hold's id, or
   * why there is none. Concurrent buyers queue on the lock, so two can never take the last one.
   */
  async hold(linkId: string, now: Date): Promise<{ holdId: string } | { refused: 'gone' | 'taken' }> {
    return this.db.sequelize.transaction(async (transaction) => {
      const [link] = await this.db.sequelize.query<{
        max_payments: number;
        status: string;
        expires_at: Date | null;
      }>('SELECT max_payments, status, expires_at FROM payment_links WHERE link_id = :linkId FOR UPDATE', {
        type: QueryTypes.SELECT,
        replacements: { linkId },
        transaction,
      });
      if (!link || link.status !== 'active' || (link.expires_at && link.expires_at <= now)) {
        return { refused: 'gone' as const };
      }
      const [taken] = await this.db.sequelize.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM orders WHERE payment_link_id = :linkId AND status <> 'closed')
              + (SELECT count(*) FROM payment_link_holds
                  WHERE link_id = :linkId AND created_at > now() - make_interval(secs => :staleS)) AS n`,
        { type: QueryTypes.SELECT, replacements: { linkId, staleS: LINK_HOLD_STALE_MS / 1000 }, transaction },
      );
      if (Number(taken?.n ?? 0) >= link.max_payments) return { refused: 'taken' as const };
      const [row] = await this.db.sequelize.query<{ id: string }>(
        'INSERT INTO payment_link_holds (link_id) VALUES (:linkId) RETURNING id',
        { type: QueryTypes.SELECT, replacements: { linkId }, transaction },
      );
      return { holdId: String(row!.id) };
    });
  }

  /** Lets a hold go: its order's row counts from now on, or its create failed. */
  async releaseHold(holdId: string): Promise<void> {
    await this.db.sequelize.query('DELETE FROM payment_link_holds WHERE id = :holdId', {
      replacements: { holdId },
    });
  }

  /** Whether the link has any order not closed, paid or pending (the place a buyer may be paying in). */
  async pendingOrderOf(linkId: string, extra: Record<string, string>): Promise<string | null> {
    const [row] = await this.select<{ trade_no: string }>(
      `SELECT trade_no FROM orders WHERE payment_link_id = :linkId AND status = 'pending'
          AND extra @> CAST(:extra AS jsonb) AND expire_time > now()
        ORDER BY created_at DESC LIMIT 1`,
      { linkId, extra: JSON.stringify(extra) },
    );
    return row?.trade_no ?? null;
  }

  async insertState(state: SignInState, expiresAt: Date): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO checkout_states (nonce, kind, ref, channel_code, amount, note, expires_at)
       VALUES (:nonce, :kind, :ref, :channelCode, :amount, :note, :expiresAt)`,
      {
        replacements: {
          ...state,
          amount: state.amount ?? null,
          note: state.note ?? null,
          expiresAt: expiresAt.toISOString(),
        },
      },
    );
    // Old states go with each new one: a table that stays the size of ten minutes of sign-ins.
    await this.db.sequelize.query("DELETE FROM checkout_states WHERE expires_at < now() - interval '1 day'");
  }

  /** The state's row, if it exists at all (used or not). */
  async findState(nonce: string): Promise<(SignInState & { usedAt: Date | null; expiresAt: Date }) | null> {
    const [row] = await this.select<SignInState & { usedAt: Date | null; expiresAt: Date }>(
      `SELECT nonce, kind, ref, channel_code AS "channelCode", amount::float8 AS amount, note,
              used_at AS "usedAt", expires_at AS "expiresAt"
         FROM checkout_states WHERE nonce = :nonce`,
      { nonce },
    );
    return row ?? null;
  }

  /** Marks the state used; false when it was used already or has expired (one taker wins). */
  async takeState(nonce: string): Promise<boolean> {
    const rows = await this.select<{ nonce: string }>(
      `UPDATE checkout_states SET used_at = now()
        WHERE nonce = :nonce AND used_at IS NULL AND expires_at > now()
        RETURNING nonce`,
      { nonce },
    );
    return rows.length > 0;
  }

  // ---- standing codes ----

  async insertCode(
    c: Omit<MerchantCode, 'status' | 'disabledAt' | 'createdAt' | 'updatedAt'>,
  ): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO merchant_codes (code_id, app_id, merchant_id, name, notify_url, min_amount, max_amount)
       VALUES (:codeId, :appId, :merchantId, :name, :notifyUrl, :minAmount, :maxAmount)`,
      { replacements: c },
    );
  }

  async findCode(codeId: string): Promise<MerchantCode | null> {
    const [row] = await this.select<MerchantCode>(
      `SELECT ${CODE_COLUMNS} FROM merchant_codes WHERE code_id = :codeId`,
      {
        codeId,
      },
    );
    return row ?? null;
  }

  /** The merchant's codes, newest first, by offset; `total` counts them all. */
  async listCodes(
    appId: string,
    merchantId: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: MerchantCode[]; total: number }> {
    const rows = await this.select<MerchantCode>(
      `SELECT ${CODE_COLUMNS} FROM merchant_codes WHERE app_id = :appId AND merchant_id = :merchantId
        ORDER BY created_at DESC, code_id DESC LIMIT :limit OFFSET :offset`,
      { appId, merchantId, ...page },
    );
    const [count] = await this.select<{ total: number }>(
      'SELECT count(*)::int AS total FROM merchant_codes WHERE app_id = :appId AND merchant_id = :merchantId',
      { appId, merchantId },
    );
    return { rows, total: count?.total ?? 0 };
  }

  /** Disables the code (again: nothing changes); false when the merchant has no such code. */
  async disableCode(appId: string, merchantId: string, codeId: string): Promise<boolean> {
    const rows = await this.select<{ code_id: string }>(
      `UPDATE merchant_codes SET status = 'disabled', disabled_at = coalesce(disabled_at, now()),
              updated_at = CASE WHEN status = 'disabled' THEN updated_at ELSE now() END
        WHERE app_id = :appId AND merchant_id = :merchantId AND code_id = :codeId
        RETURNING code_id`,
      { appId, merchantId, codeId },
    );
    return rows.length > 0;
  }
}
