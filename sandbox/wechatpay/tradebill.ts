/**
 * WeChat Pay's trade statement (交易账单, `bill_type=ALL`) as WeChat writes it: a UTF-8 BOM, the
 * header, one line per payment or refund whose every value starts with a backtick (so that a
 * spreadsheet keeps long numbers as text), then the summary header and its line, every line
 * ending in CRLF. Nothing is quoted or escaped: a description's commas appear as they are.
 * Written here on its own, not with durapay's reader, so that reading it is a test of two
 * readings of the format. The sandbox channel's simulator serves the same file.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);

/** An order whose description holds this shows one fen more on the statement than was paid. */
export const STATEMENT_AMOUNT_PLUS_ONE = '[statement:amount+1]';
/** An order whose description holds this is paid but left off the statement. */
export const STATEMENT_OMIT = '[statement:omit]';
/** A refund whose reason holds this shows PROCESSING on the statement, whatever it became. */
export const STATEMENT_REFUND_PROCESSING = '[statement:refund-processing]';

/** `all`: today's 27 columns; `legacy`: the 24 that merchants on the older layout still get. */
export type TradebillLayout = 'all' | 'legacy';

/** One detail line. Amounts in fen, the fee in thousandths of a fen (signed: a refund's is negative). */
export interface TradebillLine {
  /** When it happened (a refund: when it was accepted), ms since the epoch. */
  at: number;
  appid: string;
  mchid: string;
  subMchid: string;
  transactionId: string;
  outTradeNo: string;
  openid: string;
  /** JSAPI, APP, MWEB, NATIVE. */
  tradeType: string;
  description: string;
  attach: string;
  fee: number;
  /** A payment: its total; a refund: the refund's amount and its state as the statement shows it. */
  entry:
    | {
        kind: 'payment';
        total: number;
        /** A code payment its reverse gave back (REVOKED): listed, and no money settled. */
        revoked?: boolean;
      }
    | {
        kind: 'refund';
        refundId: string;
        outRefundNo: string;
        refund: number;
        refundStatus: 'SUCCESS' | 'PROCESSING' | 'CHANGE' | 'FAIL';
      };
}

const HEADERS: Record<TradebillLayout, string> = {
  all: '交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注',
  legacy:
    '交易时间,公众账号ID,商户号,子商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,总金额,企业红包金额,微信退款单号,商户退款单号,退款金额,企业红包退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率',
};

const SUMMARY_HEADERS: Record<TradebillLayout, string> = {
  all: '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额',
  legacy: '总交易单数,总交易额,总退款金额,总企业红包退款金额,手续费总金额',
};

/** The rate the sandbox charges (0.6 %, WeChat's usual one): a fen's fee is 6 thousandths of a fen. */
export const SANDBOX_FEE_RATE = '0.60%';
export const feeOf = (amountFen: number): number => amountFen * 6;

/** An integer count of 10^-decimals yuan as WeChat prints it: 1234 fen → "12.34". */
export function yuan(units: number, decimals: number): string {
  const sign = units < 0 ? '-' : '';
  const digits = String(Math.abs(units)).padStart(decimals + 1, '0');
  return `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** China Standard Time, as the statement prints it: 2026-11-23 21:04:05. */
export function shanghaiText(ms: number): string {
  return new Date(ms + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}

/** The day (YYYY-MM-DD) an instant falls on in China Standard Time. */
export function shanghaiDay(ms: number): string {
  return shanghaiText(ms).slice(0, 10);
}

function values(line: TradebillLine, layout: TradebillLayout): string[] {
  const { entry } = line;
  const payment = entry.kind === 'payment' ? entry.total : 0;
  const refund = entry.kind === 'refund' ? entry : undefined;
  const head = [
    shanghaiText(line.at),
    line.appid,
    line.mchid,
    line.subMchid,
    '',
    line.transactionId,
    line.outTradeNo,
    line.openid,
    line.tradeType,
    refund ? 'REFUND' : entry.kind === 'payment' && entry.revoked ? 'REVOKED' : 'SUCCESS',
    'OTHERS',
    'CNY',
    yuan(payment, 2),
    '0.00',
    refund?.refundId ?? '0',
    refund?.outRefundNo ?? '0',
    yuan(refund?.refund ?? 0, 2),
    '0.00',
    refund ? 'ORIGINAL' : '',
    refund?.refundStatus ?? '',
    line.description,
    line.attach,
    yuan(line.fee, 5),
    SANDBOX_FEE_RATE,
  ];
  if (layout === 'legacy') return head;
  return [...head, yuan(payment, 2), yuan(refund?.refund ?? 0, 2), ''];
}

function summary(lines: readonly TradebillLine[], layout: TradebillLayout): string[] {
  let paid = 0;
  let refunded = 0;
  let fees = 0;
  for (const line of lines) {
    if (line.entry.kind === 'payment') paid += line.entry.revoked ? 0 : line.entry.total;
    else refunded += line.entry.refund;
    fees += line.fee;
  }
  const count = String(lines.length);
  if (layout === 'legacy') return [count, yuan(paid, 2), yuan(refunded, 2), '0.00', yuan(fees, 5)];
  return [count, yuan(paid, 2), yuan(refunded, 2), '0.00', yuan(fees, 5), yuan(paid, 2), yuan(refunded, 2)];
}

const tick = (cells: string[]): string => cells.map((v) => `\`${v}`).join(',');

/** The statement's text, exactly as WeChat Pay publishes it (BOM, CRLF). */
export function tradebillText(lines: readonly TradebillLine[], layout: TradebillLayout): string {
  const out = [
    HEADERS[layout],
    ...lines.map((line) => tick(values(line, layout))),
    SUMMARY_HEADERS[layout],
    tick(summary(lines, layout)),
  ];
  return `\ufeff${out.join('\r\n')}\r\n`;
}

/** The file a download answers (gzip) and the SHA-1 of the text inside it, as `hash_value` gives it. */
export async function tradebillFile(lines: readonly TradebillLine[], layout: TradebillLayout) {
  const text = Buffer.from(tradebillText(lines, layout), 'utf8');
  // Compressed off the event loop: a long day's file would otherwise hold up every other request.
  return { gzip: await gzipAsync(text), sha1: createHash('sha1').update(text).digest('hex') };
}
