// Longer than 400 lines on purpose: the simulated channel's whole contract desk (pages, API, and the rules each deduction is checked against under one row lock) in one place, reviewed together for races.
/**
 * The sandbox's auto-debit contracts (SPEC §17), the simulator's side of
 * src/channels/sandbox/contracts.ts: the merchant offers a contract (`POST /v1/contract-signings`),
 * the buyer signs it on its page (`/contracts/{contract_no}/sign`) or ends it there later
 * (`/contracts/{contract_no}/terminate`); the merchant sends a pre-deduction notice, deducts and
 * unsigns. The rules are WeChat Pay 委托代扣's: deductions only 07:00–22:00 China time, at most
 * one a day per contract, never above the last notice's amount nor sooner than a day after it,
 * never under a contract that is not in effect. Each rule is checked under the contract's row
 * lock, so deductions sent at once cannot pass it together.
 *
 * Times are the contract clock's (`clock`): on a time-scaled stack a day passes in a second,
 * and the simulator's calendar runs as durapay's does.
 */
import type { Request, Router } from 'express';
import Joi from 'joi';
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from '../src/platform/db';
import type { Logger } from '../src/platform/logger';
import { randomBase32 } from '../src/platform/ids';
import { validateStrictly } from '../src/platform/http/strict';
import {
  SANDBOX_CONTRACT_WINDOW,
  SANDBOX_NOTICE_LEAD_MS,
  type WireContractDeduction,
  type WireContractNotification,
  type WireContractSigning,
  type WireContractState,
} from '../src/channels/sandbox/contracts';
import { SANDBOX_SIGNATURE_HEADER, signSandboxPayload } from '../src/channels/sandbox/signature';
import type { WireBarcodeAnswer } from '../src/channels/sandbox/transformers';
import { contractTimeOf, inWindow, localDay, type ContractClock } from '../src/modules/contracts/rules';
import { isoOrNull } from '../src/platform/dates';
import type { Background } from './background';
import type { DeductionSteer, SandboxControls } from './controls';
import { escapeHtml, formatYuan, checkoutStyle } from './html';
import { SandboxRefusal, type OrderRow } from './store';

export interface ContractRow {
  contract_no: string;
  contract_id: string | null;
  subject: string;
  plan: WireContractSigning['plan'];
  notify_url: string;
  return_url: string | null;
  sub_merchant_no: string | null;
  status: 'signing' | 'active' | 'terminated' | 'expired';
  terminated_by: 'buyer' | 'merchant' | null;
  notice_amount: number | null;
  noticed_at: Date | null;
  notices: number;
  signed_at: Date | null;
  terminated_at: Date | null;
}

export interface ContractDeskDeps {
  db: Database;
  logger: Logger;
  secret: string;
  /** Where this router is reached by a browser, e.g. http://127.0.0.1:8080/sandbox. */
  publicBase: string;
  background: Background;
  controls: SandboxControls;
  clock: ContractClock;
  buyerConfirmMs: number;
  /** Posts a paid deduction's payment callback, as any paid order's. */
  notifyPaid(order: OrderRow): void;
  /** Pays a pending order (the buyer who confirms later). */
  payOrder(tradeNo: string): Promise<{ order: OrderRow; changed: boolean } | null>;
}

const planSchema = Joi.object({
  period: Joi.string().valid('day', 'week', 'month').required(),
  every: Joi.number().integer().min(1).required(),
  amount: Joi.number().integer().min(1).required(),
});

const signingSchema = Joi.object<WireContractSigning>({
  contract_no: Joi.string().max(64).required(),
  subject: Joi.string().max(256).required(),
  plan: planSchema.required(),
  notify_url: Joi.string().uri().max(1024).required(),
  return_url: Joi.string().uri().max(1024),
  sub_merchant_no: Joi.string().max(64).allow(null).required(),
}).required();

const noticeSchema = Joi.object<{ contract_id: string; amount: number }>({
  contract_id: Joi.string().max(64).required(),
  amount: Joi.number().integer().min(1).required(),
}).required();

const deductionSchema = Joi.object<WireContractDeduction>({
  trade_no: Joi.string().max(64).required(),
  contract_id: Joi.string().max(64).required(),
  amount: Joi.number().integer().min(1).required(),
  currency: Joi.string().max(8).required(),
  subject: Joi.string().max(256).required(),
  notify_url: Joi.string().uri().max(1024).required(),
  sub_merchant_no: Joi.string().max(64).allow(null).required(),
}).required();

const terminateSchema = Joi.object<{ reason: string }>({
  reason: Joi.string().max(256).required(),
}).required();
const signAsBuyerSchema = Joi.object<{ result: 'sign' | 'decline' }>({
  result: Joi.string().valid('sign', 'decline').required(),
}).required();

function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  return validateStrictly(schema, value, (message) => new SandboxRefusal(400, 'invalid_request', message));
}

function withNumbers(row: ContractRow): ContractRow {
  return { ...row, notice_amount: row.notice_amount === null ? null : Number(row.notice_amount) };
}

export function contractState(row: ContractRow): WireContractState {
  return {
    contract_no: row.contract_no,
    contract_id: row.contract_id,
    status: row.status,
    terminated_by: row.terminated_by,
    signed_at: isoOrNull(row.signed_at),
    terminated_at: isoOrNull(row.terminated_at),
  };
}

/** The contracts' routes, added to the simulator's router after its /v1 signature check. */
export function contractRoutes(
  router: Router,
  deps: ContractDeskDeps,
  io: { body: (req: Request) => unknown; raw: (req: Request) => Buffer },
): void {
  const { body } = io;
  const { db, logger, controls } = deps;
  const now = () => contractTimeOf(deps.clock, Date.now());
  const rows = <T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) => db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });
  const find = async (contractNo: string, transaction?: Transaction) => {
    const [row] = await rows<ContractRow>(
      `SELECT * FROM sandbox_contracts WHERE contract_no = :contractNo${transaction ? ' FOR UPDATE' : ''}`,
      { contractNo },
      transaction,
    );
    return row ? withNumbers(row) : null;
  };
  const mustFind = async (contractNo: string, transaction?: Transaction) => {
    const row = await find(contractNo, transaction);
    if (!row) throw new SandboxRefusal(404, 'contract_not_found', `contract ${contractNo} does not exist`);
    return row;
  };
  const signUrl = (contractNo: string) =>
    `${deps.publicBase}/contracts/${encodeURIComponent(contractNo)}/sign`;

  /** Posts a contract notification, once (a lost one is found by durapay's query). */
  function notify(row: ContractRow, type: WireContractNotification['type']): void {
    const payload: WireContractNotification = {
      event_id: `EVC${randomBase32(16).toUpperCase()}`,
      type,
      contract: contractState(row),
    };
    const raw = JSON.stringify(payload);
    deps.background.run(async () => {
      if (controls.contractNotificationsLost(row.contract_no)) {
        logger.info('sandbox contract notification lost (fault injection)', {
          contract_no: row.contract_no,
          type,
        });
        return;
      }
      try {
        const res = await fetch(row.notify_url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [SANDBOX_SIGNATURE_HEADER]: signSandboxPayload(deps.secret, raw),
          },
          body: raw,
          redirect: 'manual',
          signal: AbortSignal.timeout(10_000),
        });
        const answer = (await res.text()).slice(0, 200);
        if (res.status !== 200 || answer.trim() !== 'success')
          logger.warn('sandbox contract notification not acknowledged', {
            contract_no: row.contract_no,
            type,
            answer,
          });
      } catch (err) {
        logger.warn('sandbox contract notification failed', {
          contract_no: row.contract_no,
          type,
          error: String(err),
        });
      }
    }, row.contract_no);
  }

  /** Ends a contract in effect (or one still offered), once; answers the row as it now is. */
  async function terminate(
    contractNo: string,
    by: 'buyer' | 'merchant',
  ): Promise<{ row: ContractRow; changed: boolean }> {
    const [ended] = await rows<ContractRow>(
      `UPDATE sandbox_contracts
          SET status = CASE WHEN status = 'signing' THEN 'expired' ELSE 'terminated' END,
              terminated_by = :by, terminated_at = now(), updated_at = now()
        WHERE contract_no = :contractNo AND status IN ('signing', 'active')
        RETURNING *`,
      { contractNo, by },
    );
    if (ended) return { row: withNumbers(ended), changed: true };
    return { row: await mustFind(contractNo), changed: false };
  }

  // ---- the buyer's pages (a browser opens them: not signed) ----

  router.get('/contracts/:contract_no/sign', async (req, res) => {
    const row = await find(req.params.contract_no as string);
    if (!row) {
      res.status(404).type('html').send('<!doctype html><title>Not found</title><p>No such contract.</p>');
      return;
    }
    res.set('Cache-Control', 'no-store').type('html').send(signPage(row));
  });

  router.post('/contracts/:contract_no/sign', async (req, res) => {
    const { result } = validate(signAsBuyerSchema, formOrJson(req, io));
    const contractNo = req.params.contract_no as string;
    if (result === 'decline') {
      const row = await mustFind(contractNo);
      res.json(contractState(row));
      return;
    }
    const [signed] = await rows<ContractRow>(
      `UPDATE sandbox_contracts SET status = 'active', contract_id = :contractId, signed_at = now(), updated_at = now()
        WHERE contract_no = :contractNo AND status = 'signing' RETURNING *`,
      { contractNo, contractId: `SBXK${randomBase32(20).toUpperCase()}` },
    );
    const row = signed ? withNumbers(signed) : await mustFind(contractNo);
    if (!signed && row.status !== 'active')
      throw new SandboxRefusal(409, 'contract_not_signable', `contract ${contractNo} is ${row.status}`);
    res.json({ ...contractState(row), return_url: row.return_url });
    if (signed) {
      logger.info('sandbox contract signed by the buyer', { contract_no: contractNo });
      notify(row, 'contract.signed');
    }
  });

  router.post('/contracts/:contract_no/terminate', async (req, res) => {
    const { row, changed } = await terminate(req.params.contract_no as string, 'buyer');
    res.json(contractState(row));
    if (changed && row.status === 'terminated') {
      logger.info('sandbox contract ended by the buyer', { contract_no: row.contract_no });
      notify(row, 'contract.terminated');
    }
  });

  // ---- the merchant's API (signed) ----

  router.post('/v1/contract-signings', async (req, res) => {
    const offer = validate(signingSchema, body(req));
    await db.sequelize.query(
      `INSERT INTO sandbox_contracts (contract_no, subject, plan, notify_url, return_url, sub_merchant_no, status,
                                      created_at, updated_at)
       VALUES (:contract_no, :subject, CAST(:plan AS jsonb), :notify_url, :return_url, :sub_merchant_no, 'signing',
               now(), now())
       ON CONFLICT (contract_no) DO NOTHING`,
      { replacements: { ...offer, plan: JSON.stringify(offer.plan), return_url: offer.return_url ?? null } },
    );
    const row = await mustFind(offer.contract_no);
    if (row.plan.amount !== offer.plan.amount || row.plan.period !== offer.plan.period)
      throw new SandboxRefusal(
        422,
        'contract_no_conflict',
        `contract_no ${offer.contract_no} was offered with another plan`,
      );
    res.json({ contract_no: row.contract_no, sign_url: signUrl(row.contract_no) });
  });

  router.get('/v1/contracts/:contract_no', async (req, res) => {
    res.json(contractState(await mustFind(req.params.contract_no as string)));
  });

  router.post('/v1/contracts/:contract_no/terminate', async (req, res) => {
    validate(terminateSchema, body(req));
    const { row, changed } = await terminate(req.params.contract_no as string, 'merchant');
    controls.countContractCall(row.contract_no, 'terminate');
    res.json(contractState(row));
    if (changed) logger.info('sandbox contract ended by the merchant', { contract_no: row.contract_no });
  });

  router.post('/v1/contract-notices', async (req, res) => {
    const notice = validate(noticeSchema, body(req));
    const [row] = await rows<ContractRow>(
      `UPDATE sandbox_contracts SET notice_amount = :amount, noticed_at = now(), notices = notices + 1, updated_at = now()
        WHERE contract_id = :contract_id AND status = 'active' RETURNING *`,
      notice,
    );
    if (!row)
      throw new SandboxRefusal(422, 'contract_not_active', `contract ${notice.contract_id} is not in effect`);
    controls.countContractCall(row.contract_no, 'notice');
    res.status(204).end();
    // The buyer reads the notice and unsigns before the deduction comes.
    if (controls.buyerCancelsAfterNotice(row.contract_no)) {
      const ended = await terminate(row.contract_no, 'buyer');
      if (ended.changed) {
        logger.info('sandbox buyer ended the contract after its notice', { contract_no: row.contract_no });
        notify(ended.row, 'contract.terminated');
      }
    }
  });

  router.post('/v1/contract-deductions', async (req, res) => {
    const asked = validate(deductionSchema, body(req));
    const outcome = await db.sequelize.transaction(async (transaction) => {
      const [contract] = await rows<ContractRow>(
        'SELECT * FROM sandbox_contracts WHERE contract_id = :id FOR UPDATE',
        { id: asked.contract_id },
        transaction,
      );
      if (!contract)
        throw new SandboxRefusal(404, 'contract_not_found', `contract ${asked.contract_id} does not exist`);
      const c = withNumbers(contract);
      const [earlier] = await rows<OrderRow & { contract_id: string | null }>(
        'SELECT * FROM sandbox_orders WHERE trade_no = :tradeNo',
        { tradeNo: asked.trade_no },
        transaction,
      );
      if (earlier) {
        if (earlier.contract_id !== asked.contract_id || Number(earlier.amount) !== asked.amount)
          throw new SandboxRefusal(422, 'trade_no_conflict', `trade_no ${asked.trade_no} already used`);
        return {
          order: { ...earlier, amount: Number(earlier.amount) },
          steer: 'pays' as DeductionSteer,
          created: false,
          contract: c,
        };
      }
      controls.countContractCall(c.contract_no, 'deduct');
      if (c.status !== 'active')
        throw new SandboxRefusal(
          422,
          'contract_not_active',
          `contract ${c.contract_no} is ${c.status}: nothing may be deducted under it`,
        );
      const at = now();
      if (!inWindow(SANDBOX_CONTRACT_WINDOW, at))
        throw new SandboxRefusal(422, 'outside_window', 'deductions are taken 07:00–22:00 China time only');
      const noticedAt = c.noticed_at ? contractTimeOf(deps.clock, new Date(c.noticed_at).getTime()) : null;
      if (noticedAt === null || c.notice_amount === null || c.notice_amount < asked.amount)
        throw new SandboxRefusal(
          422,
          'notice_required',
          'no pre-deduction notice of at least this amount was sent',
        );
      // A notice covers the retries of one deduction until one is taken (a reversed one is not).
      const [sinceNotice] = await rows<{ n: string }>(
        `SELECT count(*) AS n FROM sandbox_orders
          WHERE contract_id = :id AND status IN ('paid', 'pending') AND created_at >= :noticedAt`,
        { id: asked.contract_id, noticedAt: c.noticed_at },
        transaction,
      );
      if (Number(sinceNotice!.n) > 0)
        throw new SandboxRefusal(
          422,
          'notice_required',
          'the last pre-deduction notice was used by a deduction taken since',
        );
      if (at - noticedAt < SANDBOX_NOTICE_LEAD_MS)
        throw new SandboxRefusal(
          422,
          'notice_too_recent',
          'a deduction may come a day after its notice, not sooner',
        );
      const day = localDay(at);
      const [taken] = await rows<{ n: string }>(
        `SELECT count(*) AS n FROM sandbox_orders
          WHERE contract_id = :id AND contract_day = :day AND status IN ('paid', 'pending')`,
        { id: asked.contract_id, day },
        transaction,
      );
      if (Number(taken!.n) > 0)
        throw new SandboxRefusal(422, 'daily_limit', 'a contract is deducted at most once a day');
      const steer = controls.nextDeduction(c.contract_no);
      if (steer === 'insufficient')
        throw new SandboxRefusal(422, 'not_enough', "the buyer's balance is not enough for this deduction");
      const paid = steer !== 'confirms_later';
      const [order] = await rows<OrderRow>(
        `INSERT INTO sandbox_orders (trade_no, channel_trade_no, amount, currency, pay_method, subject, expire_at,
                                     notify_url, extra, sub_merchant_no, profit_sharing, callback_mode, status, paid_at,
                                     buyer, contract_id, contract_day, created_at, updated_at)
         VALUES (:trade_no, :channelTradeNo, :amount, :currency, 'contract', :subject, now() + interval '10 minutes',
                 :notify_url, '{}'::jsonb, :sub_merchant_no, false, 'normal',
                 CASE WHEN :paid THEN 'paid' ELSE 'pending' END, CASE WHEN :paid THEN now() END,
                 :steer, :contract_id, :day, now(), now())
         RETURNING *`,
        { ...asked, channelTradeNo: `SBXD${randomBase32(20).toUpperCase()}`, paid, steer, day },
        transaction,
      );
      return { order: { ...order!, amount: Number(order!.amount) }, steer, created: true, contract: c };
    });
    const { order, steer, created } = outcome;
    if (created) {
      logger.info('sandbox deduction taken', {
        trade_no: order.trade_no,
        contract_no: outcome.contract.contract_no,
        steer,
      });
      if (order.status === 'paid') deps.notifyPaid(order);
      if (steer === 'confirms_later') {
        deps.background.later(
          deps.buyerConfirmMs,
          async () => {
            const paid = await deps.payOrder(order.trade_no);
            if (paid?.changed) deps.notifyPaid(paid.order);
          },
          order.trade_no,
        );
      }
    }
    if (created && steer === 'answer_lost') {
      req.socket.destroy();
      return;
    }
    if (order.status === 'closed')
      throw new SandboxRefusal(422, 'order_closed', `order ${order.trade_no} is closed`);
    const answer: WireBarcodeAnswer = {
      trade_no: order.trade_no,
      channel_trade_no: order.channel_trade_no,
      status: order.status === 'paid' ? 'paid' : 'paying',
      amount: order.amount,
      paid_at: isoOrNull(order.paid_at),
    };
    res.json(answer);
  });
}

/** The buyer's signing page answers a form's POST as well as JSON (a script's or a test's). */
function formOrJson(
  req: Request,
  io: { body: (req: Request) => unknown; raw: (req: Request) => Buffer },
): unknown {
  if (req.is('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(io.raw(req).toString('utf8')));
  return io.body(req);
}

function signPage(row: ContractRow): string {
  const open = row.status === 'signing';
  const every = row.plan.every === 1 ? row.plan.period : `${row.plan.every} ${row.plan.period}s`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox auto-debit — ${escapeHtml(row.subject)}</title>
<style>${checkoutStyle('#1a7f37')}</style>
</head>
<body>
<h1>durapay sandbox: sign an auto-debit contract</h1>
<p>${escapeHtml(row.subject)}</p>
<p class="amount">¥${formatYuan(row.plan.amount)} <small>every ${escapeHtml(every)}</small></p>
<dl>
  <dt>Contract</dt><dd>${escapeHtml(row.contract_no)}</dd>
  <dt>Status</dt><dd id="status">${escapeHtml(row.status)}</dd>
</dl>
<form method="post"><button class="pay" name="result" value="sign"${open ? '' : ' disabled'}>Sign</button></form>
<form method="post"><button name="result" value="decline"${open ? '' : ' disabled'}>Decline</button></form>
</body>
</html>`;
}
