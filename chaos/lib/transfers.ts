/**
 * The `transfers` scenario of `npm run chaos`: shoppers pay people out (SPEC §11) — payees paid
 * at once, transfers steered to fail, openid payees who confirm on the sandbox's page, transfers
 * cancelled while their payee has not confirmed, or cancelled too late — some sent three times
 * at once, some sent again after they ended, while the worker is killed where a transfer is under
 * way (./holds.ts). The invariants are counted at the channel (the sandbox's transfers and its
 * count of create requests per transfer_no) and at the merchant's receiver, not in the answers.
 */
import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { Client, Connection } from '@temporalio/client';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { describeEvent } from './evidence';
import type { Delivery } from './invariants';
import { decided, pick, type Answer, type ShopperStats } from './shopper';

/**
 * What the shopper makes of a transfer: `paid` (an Alipay user, paid at once), `fails` (steered
 * to fail by the sandbox), `confirmed` (an openid payee who confirms), `cancelled` (an openid
 * payee's transfer cancelled before they confirm), `late_cancel` (an Alipay user's, cancelled
 * right after it was made: mostly too late).
 */
export const TRANSFER_KINDS = ['paid', 'fails', 'confirmed', 'cancelled', 'late_cancel'] as const;
export type TransferKind = (typeof TRANSFER_KINDS)[number];

/** How the create is sent: once; three identical requests at once; once more after the transfer ended. */
export const SENDINGS = ['once', 'at_once', 'again'] as const;
export type Sending = (typeof SENDINGS)[number];

const KIND_WEIGHTS: [TransferKind, number][] = [
  ['paid', 0.3],
  ['fails', 0.2],
  ['confirmed', 0.25],
  ['cancelled', 0.15],
  ['late_cancel', 0.1],
];
const SENDING_WEIGHTS: [Sending, number][] = [
  ['once', 0.55],
  ['at_once', 0.25],
  ['again', 0.2],
];

/** Every transfer of the run says this in its remark. */
export const TRANSFER_REMARK = 'Chaos transfer';
/** The sandbox accepts a transfer whose remark holds this, and fails it when its time comes. */
const FAIL_MARKER = '[transfer:fail]';

export interface TransferJourney {
  merchantTransferNo: string;
  kind: TransferKind;
  sending: Sending;
  amount: number;
  /** Every create's deciding answer (`undefined`: none within the deadline). */
  creates: (Answer | undefined)[];
  transferNo?: string;
  /** The sandbox's answer to the payee's Confirm: its HTTP status and the transfer's status. */
  confirmed?: { status: number; transferStatus?: string };
  /** Every cancel's deciding answer. */
  cancels: (Answer | undefined)[];
}

export interface TransferShopperOptions {
  baseUrl: string;
  app: AppCredentials;
  notifyUrl: string;
  /** No new transfer after this (epoch ms)… */
  until: number;
  /** …nor once this says the run has what it came for (the planned kills happened). */
  done?: () => boolean;
  requestDeadlineMs: number;
  random: () => number;
  journeys: TransferJourney[];
  stats: ShopperStats;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = ['success', 'failed', 'cancelled'];
const isFinal = (status: unknown) => FINAL.includes(String(status));

/** A channel's refusal (502 channel_transfer_fail) decides a request as much as a 4xx does. */
const refusal = (status: number, code: string) => status === 502 && code === 'channel_transfer_fail';

/** The transfer as durapay shows it now, when it answers. */
async function query(
  o: TransferShopperOptions,
  transferNo: string,
  deadline: number,
): Promise<Record<string, unknown> | undefined> {
  const a = await decided(
    o.baseUrl,
    o.app,
    'GET',
    `/api/v1/transfer/query/${transferNo}`,
    undefined,
    o.stats,
    deadline,
  );
  return a?.status === 200 && a.data ? a.data : undefined;
}

/** Asks durapay until the transfer's status passes `test`; the transfer then, or undefined. */
async function until(
  o: TransferShopperOptions,
  transferNo: string,
  test: (status: string) => boolean,
  deadline: number,
): Promise<Record<string, unknown> | undefined> {
  while (Date.now() < deadline) {
    const t = await query(o, transferNo, deadline);
    if (t && test(String(t.status))) return t;
    await sleep(250);
  }
  return undefined;
}

/**
 * The payee confirms, once durapay shows the transfer waiting for them: the Confirm of the page
 * its package_info leads to, pressed again only when the sandbox did not answer.
 */
async function payeeConfirms(o: TransferShopperOptions, j: TransferJourney, deadline: number) {
  const t = await until(o, j.transferNo!, (s) => s === 'wait_user_confirm' || isFinal(s), deadline);
  const page = (t?.pay_credential as { package_info?: string } | null | undefined)?.package_info;
  if (t?.status !== 'wait_user_confirm' || !page) return;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    o.stats.requests += 1;
    try {
      const res = await fetch(page, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"result":"confirm"}',
        signal: AbortSignal.timeout(15_000),
      });
      if (res.status < 500) {
        const body = (await res.json().catch(() => ({}))) as { status?: string };
        j.confirmed = { status: res.status, ...(body.status ? { transferStatus: body.status } : {}) };
        return;
      }
    } catch {
      // The sandbox lives in the API process.
    }
    o.stats.retries += 1;
    await sleep(Math.min(2_000, 100 * 2 ** attempt));
  }
}

/**
 * Cancels the transfer, `copies` identical cancels at once; asked again while an answer shows
 * the transfer not ended (the channel's word did not come within the request).
 */
async function cancel(o: TransferShopperOptions, j: TransferJourney, copies: number, deadline: number) {
  const once = () =>
    decided(
      o.baseUrl,
      o.app,
      'POST',
      '/api/v1/transfer/cancel',
      { transfer_no: j.transferNo },
      o.stats,
      deadline,
      refusal,
    );
  while (Date.now() < deadline) {
    const answers = await Promise.all(Array.from({ length: copies }, once));
    j.cancels.push(...answers);
    const open = answers.some((a) => a === undefined || (a.status === 200 && !isFinal(a.data?.status)));
    if (!open) return;
    await sleep(1_000);
  }
}

/** One shopper: transfers one after another, of random kinds and sendings, until `until`. */
export async function shopTransfers(o: TransferShopperOptions): Promise<void> {
  while (Date.now() < o.until && !o.done?.()) {
    // The first transfers are one of each kind, so a short run meets every outcome by
    // construction; the rest are drawn by weight.
    const n = o.journeys.length;
    const kind = n < KIND_WEIGHTS.length ? KIND_WEIGHTS[n]![0] : pick(o.random, KIND_WEIGHTS);
    const sending = pick(o.random, SENDING_WEIGHTS);
    const j: TransferJourney = {
      merchantTransferNo: `CT-${randomUUID()}`,
      kind,
      sending,
      amount: 10 + Math.floor(o.random() * 990),
      creates: [],
      cancels: [],
    };
    o.journeys.push(j);
    const openid = kind === 'confirmed' || kind === 'cancelled';
    const body = {
      merchant_transfer_no: j.merchantTransferNo,
      channel_code: 'sandbox',
      amount: j.amount,
      payee: openid
        ? { type: 'openid', account: `o-chaos-${randomUUID().slice(0, 13)}` }
        : {
            type: 'alipay_user_id',
            account: `2088${String(Math.floor(o.random() * 1e12)).padStart(12, '0')}`,
            name: 'Chaos Payee',
          },
      remark: kind === 'fails' ? `${TRANSFER_REMARK} ${FAIL_MARKER}` : TRANSFER_REMARK,
      notify_url: o.notifyUrl,
    };
    const deadline = () => Date.now() + o.requestDeadlineMs;
    const create = () =>
      decided(o.baseUrl, o.app, 'POST', '/api/v1/transfer', body, o.stats, deadline(), refusal);
    j.creates = sending === 'at_once' ? await Promise.all([create(), create(), create()]) : [await create()];
    const made = j.creates.find((a) => a?.status === 200);
    if (!made) continue;
    j.transferNo = String(made.data!.transfer_no);
    const copies = sending === 'at_once' ? 2 : 1;
    if (kind === 'confirmed') await payeeConfirms(o, j, deadline());
    else if (kind === 'late_cancel') await cancel(o, j, copies, deadline());
    else if (kind === 'cancelled') {
      const t = await until(o, j.transferNo, (s) => s === 'wait_user_confirm' || isFinal(s), deadline());
      if (t?.status === 'wait_user_confirm') await cancel(o, j, copies, deadline());
    }
    if (sending === 'again') {
      await until(o, j.transferNo, isFinal, deadline());
      j.creates.push(await create());
    }
  }
}

export interface TransferRow {
  transfer_no: string;
  merchant_transfer_no: string;
  status: string;
  amount: string;
  channel_transfer_no: string | null;
  refused_at_create: boolean;
  /** The channel's row, if it has the transfer. */
  at_channel_status: string | null;
  at_channel_amount: string | null;
  at_channel_transfer_no: string | null;
}

export interface ChannelTransferRow {
  transfer_no: string;
  status: string;
  amount: string;
  create_requests: number;
  /** Whether durapay has a transfer of this number. */
  known: boolean;
}

/** The app's transfers with their rows at the channel, and every transfer the channel has. */
export async function readTransferState(databaseUrl: string, appId: string) {
  const pg = new PgClient({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const transfers = (
      await pg.query<TransferRow>(
        `SELECT t.transfer_no, t.merchant_transfer_no, t.status, t.amount, t.channel_transfer_no,
                t.refused_at_create, s.status AS at_channel_status, s.amount AS at_channel_amount,
                s.channel_transfer_no AS at_channel_transfer_no
           FROM transfers t LEFT JOIN sandbox_transfers s ON s.transfer_no = t.transfer_no
          WHERE t.app_id = $1`,
        [appId],
      )
    ).rows;
    // The stack is the run's own: every transfer the channel has is one of its shoppers'.
    const channel = (
      await pg.query<ChannelTransferRow>(
        `SELECT s.transfer_no, s.status, s.amount, s.create_requests,
                EXISTS (SELECT 1 FROM transfers t WHERE t.transfer_no = s.transfer_no) AS known
           FROM sandbox_transfers s`,
      )
    ).rows;
    return { transfers, channel };
  } finally {
    await pg.end();
  }
}

export type TransferState = Awaited<ReturnType<typeof readTransferState>>;

const EVENT_OF: Record<string, string> = {
  success: 'transfer.succeeded',
  failed: 'transfer.failed',
  cancelled: 'transfer.cancelled',
};

/** The sum of the amounts of the rows with status success. */
export function paidOut(rows: { status: string; amount: string }[]): number {
  return rows.filter((r) => r.status === 'success').reduce((s, r) => s + Number(r.amount), 0);
}

/**
 * Every broken rule of transfers, each in a sentence naming its transfer: the channel was asked
 * at most once per transfer_no and holds nothing durapay does not know of; the money it paid out
 * is durapay's successful transfers to the fen; every transfer ended as the channel says, as the
 * shopper's doing decides, and was announced once; one transfer per merchant_transfer_no, which
 * every answer names.
 */
export function transferViolations(
  journeys: TransferJourney[],
  state: TransferState,
  deliveries: Delivery[],
): string[] {
  const out: string[] = [];
  for (const c of state.channel) {
    if (c.create_requests > 1)
      out.push(`transfer ${c.transfer_no} was asked of the channel ${c.create_requests} times`);
    if (!c.known)
      out.push(`channel transfer ${c.transfer_no} (${c.status}, ${c.amount}) is unknown to durapay`);
  }
  const channelOut = paidOut(state.channel);
  const durapayOut = paidOut(state.transfers);
  if (channelOut !== durapayOut)
    out.push(`the channel paid out ${channelOut}, durapay's successful transfers sum to ${durapayOut}`);

  const announced = new Map<string, Map<string, Set<string>>>();
  for (const d of deliveries) {
    if (!d.transferNo || !d.type.startsWith('transfer.')) continue;
    const byType = announced.get(d.transferNo) ?? new Map<string, Set<string>>();
    byType.set(d.type, (byType.get(d.type) ?? new Set()).add(d.id));
    announced.set(d.transferNo, byType);
  }
  const byMerchantNo = new Map<string, TransferRow[]>();
  for (const t of state.transfers) {
    byMerchantNo.set(t.merchant_transfer_no, [...(byMerchantNo.get(t.merchant_transfer_no) ?? []), t]);
    const no = t.transfer_no;
    if (!isFinal(t.status)) out.push(`transfer ${no} is still ${t.status}`);
    else if (t.at_channel_status === null) {
      // Never at the channel (the create never reached it): nothing was paid, and it failed.
      if (t.status !== 'failed') out.push(`transfer ${no} is ${t.status} in durapay but not at the channel`);
    } else if (t.at_channel_status !== t.status) {
      out.push(`transfer ${no} is ${t.status} in durapay but ${t.at_channel_status} at the channel`);
    }
    if (t.at_channel_amount !== null && Number(t.at_channel_amount) !== Number(t.amount))
      out.push(`transfer ${no} is of ${t.amount} in durapay, ${t.at_channel_amount} at the channel`);
    if (t.at_channel_transfer_no && t.channel_transfer_no !== t.at_channel_transfer_no)
      out.push(
        `transfer ${no} records channel_transfer_no ${t.channel_transfer_no}, the channel ${t.at_channel_transfer_no}`,
      );
    if (!isFinal(t.status)) continue;
    const byType = announced.get(no) ?? new Map<string, Set<string>>();
    const expected = EVENT_OF[t.status]!;
    const n = byType.get(expected)?.size ?? 0;
    if (n !== 1) out.push(`transfer ${no} is ${t.status} and was announced ${expected} ${n} times`);
    for (const [type, ids] of byType)
      if (type !== expected)
        out.push(`transfer ${no} is ${t.status} but was announced ${type} ${ids.size} times`);
  }
  for (const [no, rows] of byMerchantNo)
    if (rows.length > 1) out.push(`merchant_transfer_no ${no} made ${rows.length} transfers`);

  const byNo = new Map(state.transfers.map((t) => [t.transfer_no, t]));
  for (const j of journeys) {
    const answered = j.creates.filter((a): a is Answer => a?.status === 200);
    for (const a of j.creates.filter((x) => x?.status !== 200))
      out.push(
        `transfer request ${j.merchantTransferNo} was answered ${a ? `${a.status} ${a.code}` : 'nothing within the deadline'}`,
      );
    const named = new Set(answered.map((a) => String(a.data!.transfer_no)));
    if (named.size > 1)
      out.push(`merchant_transfer_no ${j.merchantTransferNo} was answered ${[...named].join(', ')}`);
    if (!j.transferNo) continue;
    const t = byNo.get(j.transferNo);
    if (!t) {
      out.push(
        `transfer ${j.transferNo} (${j.merchantTransferNo}) was answered 200 but is not in the read model`,
      );
      continue;
    }
    if (!isFinal(t.status)) continue;
    // What the shopper did decides how the transfer ends.
    const cancelledByAnswer = j.cancels.some((a) => a?.status === 200 && a.data?.status === 'cancelled');
    const expect = (statuses: string[], why: string) => {
      if (!statuses.includes(t.status))
        out.push(`transfer ${t.transfer_no} (${j.kind}) ${why}, yet it is ${t.status}`);
    };
    if (j.kind === 'fails') expect(['failed'], 'was steered to fail');
    if (j.kind === 'paid' && t.at_channel_status !== null) expect(['success'], 'was taken by the channel');
    if (j.confirmed?.status === 200) expect(['success'], 'was confirmed by its payee');
    if (cancelledByAnswer) expect(['cancelled'], 'was answered cancelled');
  }
  return out;
}

/**
 * What a violation is about, gathered while the stack still runs: for each transfer it names,
 * what the shopper did and was answered, its row in durapay and at the channel (the payee left
 * out), its notifications, the channel's callbacks about it, and its workflow's history.
 */
export async function gatherTransferEvidence(opts: {
  violations: string[];
  journeys: TransferJourney[];
  databaseUrl: string;
  temporalAddress: string;
}): Promise<Record<string, unknown>[]> {
  const transferNos = [...new Set(opts.violations.flatMap((v) => v.match(/T\d{24}/g) ?? []))].slice(0, 5);
  if (transferNos.length === 0) return [];
  const pg = new PgClient({ connectionString: opts.databaseUrl });
  await pg.connect();
  const connection = await Connection.connect({ address: opts.temporalAddress });
  const client = new Client({ connection });
  const out: Record<string, unknown>[] = [];
  try {
    for (const transferNo of transferNos) {
      const rows = async (sql: string) => (await pg.query(sql, [transferNo])).rows;
      let history: string[] = [];
      try {
        const workflowId = `transfer:${transferNo}`;
        for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
          const { events } = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
          history = history.concat(
            [`run ${run.runId} ${run.status.name}`],
            (events ?? []).map(describeEvent),
          );
        }
      } catch (err) {
        history.push(`history not read: ${String(err)}`);
      }
      out.push({
        transferNo,
        journey: opts.journeys.find((j) => j.transferNo === transferNo),
        transfer: (
          await rows(
            `SELECT transfer_no, merchant_transfer_no, amount, payee_type, remark, status, channel_status,
                    channel_transfer_no, package_info, fail_reason, refused_at_create, cancel_requested_at,
                    finished_at, created_at, updated_at
               FROM transfers WHERE transfer_no = $1`,
          )
        )[0],
        channelTransfer: (
          await rows(
            `SELECT transfer_no, channel_transfer_no, amount, payee_type, remark, status, outcome, settle_at,
                    confirm_deadline, confirmed_at, fail_reason, finished_at, create_requests, created_at, updated_at
               FROM sandbox_transfers WHERE transfer_no = $1`,
          )
        )[0],
        notifications: await rows(
          `SELECT notification_id, event_type, status, attempt_count, last_error FROM notifications
            WHERE event_key LIKE '%:' || $1`,
        ),
        callbacks: await rows(
          `SELECT received_at, outcome, error, verified FROM channel_callbacks
            WHERE raw_body LIKE '%' || $1 || '%' ORDER BY id`,
        ),
        history,
      });
    }
  } finally {
    await pg.end();
    await connection.close();
  }
  return out;
}
