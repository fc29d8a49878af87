import { randomBytes } from 'node:crypto';
import { DurapayClient, DurapayError, type CreateOrderInput, type CreateOrderResult } from '../../sdk';
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
}): Promise<void> {
  const config = loadCliConfig();
  // The range is the API's to judge; only a number is sent.
  if (!/^\d{1,13}$/.test(opts.amount)) fail('--amount must be a whole number of fen');
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
  const payUrl = created.pay_credential.pay_url;
  process.stdout.write(
    `trade_no  ${created.trade_no}\namount    ${order.amount} fen\n` +
      `${typeof payUrl === 'string' ? payUrl : JSON.stringify(created.pay_credential)}\n`,
  );
  console.error('open the pay_url and press Pay');
}
