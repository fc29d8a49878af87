import { randomBytes } from 'node:crypto';
import { DurapayClient, DurapayError, type CreateOrderInput, type CreateOrderResult } from '../../sdk';
import { SANDBOX_BUYERS, sandboxAuthCode, type SandboxBuyer } from '../../channels/sandbox';
import { fail, loadCliConfig } from '../config';
import { signingApp } from '../credentials';

/**
 * Where payment.succeeded is posted unless `--notify-url` says otherwise: the discard port of
 * this machine, where nothing listens, so the notification is retried and in the end given up.
 */
export const TRY_NOTIFY_URL = 'http://127.0.0.1:9/durapay-try';

/** Why a request never got an answer, in a few words: the connection's error code when there is one. */
function unreachable(err: unknown): string | undefined {
  if (err instanceof DOMException && err.name === 'TimeoutError') return 'no answer in time';
  if (!(err instanceof TypeError)) return undefined;
  const cause = err.cause as { code?: unknown; message?: unknown; errors?: { code?: unknown }[] } | undefined;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  if (typeof code === 'string') return code;
  return typeof cause?.message === 'string' ? cause.message : err.message;
}

/**
 * `durapay try`: a first payment. Creates a sandbox order through the running gateway, signed as
 * the app `durapay sign` uses (the dev app unless DURAPAY_APP_ID is set), and prints its trade_no,
 * amount and pay_url. No merchant is named: a sandbox order needs none (SPEC §3.1).
 */
export async function tryOrder(opts: {
  amount: string;
  subject: string;
  notifyUrl?: string;
  json?: boolean;
  url?: string;
  /** A barcode payment with a sandbox buyer code (true: the buyer who confirms a moment later). */
  barcode?: string | boolean;
}): Promise<void> {
  const config = loadCliConfig();
  // The range is the API's to judge; only a number is sent.
  if (!/^\d{1,13}$/.test(opts.amount)) fail('--amount must be a whole number of fen');
  const buyer = opts.barcode === undefined ? undefined : buyerOf(opts.barcode);
  const app = signingApp(config.dataDir);
  if (!app) {
    fail(
      'no app to sign with: run npm start once to create the dev app (.durapay/dev-app.json), ' +
        'or set DURAPAY_APP_ID and DURAPAY_APP_SECRET',
    );
  }
  const baseUrl = opts.url ?? `http://localhost:${config.api.port}`;
  let client: DurapayClient;
  try {
    client = new DurapayClient({ baseUrl, appId: app.appId, secret: app.secret });
  } catch {
    fail(`--url ${baseUrl} is not a URL`);
  }
  const order: CreateOrderInput = {
    merchant_order_no: `try-${Date.now()}-${randomBytes(4).toString('hex')}`,
    channel_code: 'sandbox',
    pay_method: 'qr_code',
    amount: Number(opts.amount),
    subject: opts.subject,
    notify_url: opts.notifyUrl ?? TRY_NOTIFY_URL,
  };
  if (buyer) {
    order.pay_method = 'barcode';
    order.auth_code = sandboxAuthCode(buyer);
    order.device_id = 'durapay-try';
    if (!opts.json)
      process.stdout.write(
        `auth_code ${order.auth_code} (a sandbox buyer who ${buyer.replace(/_/g, ' ')})\n`,
      );
  }
  let created: CreateOrderResult;
  try {
    created = await client.createOrder(order);
  } catch (err) {
    if (err instanceof DurapayError) fail(`${err.code}: ${err.message}`);
    const reason = unreachable(err);
    if (reason === undefined) fail(err);
    fail(`no durapay gateway answers at ${baseUrl} (${reason}): start it with npm start, or give --url`);
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(created)}\n`);
    return;
  }
  if (buyer) return followBarcode(client, created, order.amount);
  const payUrl = created.pay_credential.pay_url;
  process.stdout.write(
    `trade_no  ${created.trade_no}\namount    ${order.amount} fen\n` +
      `${typeof payUrl === 'string' ? payUrl : JSON.stringify(created.pay_credential)}\n`,
  );
  console.error('open the pay_url and press Pay');
}

/** The sandbox buyer `--barcode` names: one of SANDBOX_BUYERS, or the one who confirms later. */
function buyerOf(value: string | boolean): SandboxBuyer {
  if (value === true) return 'confirms_later';
  if (typeof value === 'string' && Object.hasOwn(SANDBOX_BUYERS, value)) return value as SandboxBuyer;
  fail(`--barcode takes one of ${Object.keys(SANDBOX_BUYERS).join(', ')}`);
}

/**
 * What a till sees of a barcode payment: its first answer, then, while the buyer confirms, the
 * order queried each second until it is paid or closed (reversed when the wait ends).
 */
async function followBarcode(
  client: DurapayClient,
  created: CreateOrderResult,
  amount: number,
): Promise<void> {
  process.stdout.write(
    `trade_no  ${created.trade_no}\namount    ${amount} fen\nstatus    ${created.status}\n`,
  );
  let status: string = created.status ?? 'paying';
  while (status === 'paying' || status === 'pending') {
    await new Promise((r) => setTimeout(r, 1_000));
    const order = await client.queryOrder(created.trade_no);
    status = order.status;
    if (status !== 'pending') {
      const why = order.close_reason ? ` (${order.close_reason})` : '';
      process.stdout.write(`status    ${status}${why}\n`);
    }
  }
}
