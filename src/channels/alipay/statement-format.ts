/**
 * Alipay's trade statement (业务账单, `bill_type=trade`) read record by record into
 * StatementRows, with no I/O: the zip around it and the GBK decoding are statements.ts's.
 *
 * The published detail file (`<pid>0156_<yyyyMMdd>_业务明细.csv`): comment lines starting with
 * `#` (the title, the account, the period), a start marker line, one header line, the detail
 * lines, an end marker line and more comments (totals, export time). Identifier cells carry a
 * trailing tab so that spreadsheets keep their digits; a 商品名称 holding a comma is quoted.
 * Columns are read by their header's name: the set differs between merchants and over time.
 *
 * The CSV is read here too (CsvRecords), for speed: a general CSV parser takes about 50 µs a
 * line, which is close to a minute for a statement of a million lines.
 *
 * Amounts are yuan with two decimals and a refund's are negative; they are converted on the
 * digits (a float multiply turns 0.29 into 28.999…). 服务费 is converted to thousandths of a
 * fen, as StatementRow keeps fees.
 *
 * A barcode payment that alipay.trade.cancel gave back has no line: a cancel reaches only the
 * day's payments and undoes one whole, fee included, so there is neither a payment nor a refund
 * to state, and its order, closed `reversed`, has none to match (the offline gateway's bills.ts
 * writes the day the same way).
 */
import { ChannelError } from '../errors';
import type { StatementRow } from '../ports';
import { parseBeijingTime } from './transformers';

/** What `fetch` says the file is, and what `parse` reads. */
export const ALIPAY_TRADE_STATEMENT_FORMAT = 'alipay-trade-zip';

/** The marker lines around the detail lines, as Alipay writes them. */
export const DETAIL_START_LINE =
  '#-----------------------------------------业务明细列表----------------------------------------';
export const DETAIL_END_LINE =
  '#-----------------------------------------业务明细列表结束------------------------------------';

/** The detail columns of today's trade statement, in Alipay's order. */
export const TRADE_STATEMENT_COLUMNS = [
  '支付宝交易号',
  '商户订单号',
  '业务类型',
  '商品名称',
  '创建时间',
  '完成时间',
  '门店编号',
  '门店名称',
  '操作员',
  '终端号',
  '对方账户',
  '订单金额（元）',
  '商家实收（元）',
  '支付宝红包（元）',
  '集分宝（元）',
  '支付宝优惠（元）',
  '商家优惠（元）',
  '券核销金额（元）',
  '券名称',
  '商家红包消费金额（元）',
  '卡消费金额（元）',
  '退款批次号/请求号',
  '服务费（元）',
  '分润（元）',
  '备注',
] as const;

/** The columns a row is made of; a statement without one of them is not one durapay can read. */
const NEEDED = [
  '支付宝交易号',
  '商户订单号',
  '业务类型',
  '完成时间',
  '订单金额（元）',
  '退款批次号/请求号',
] as const;
const FEE = '服务费（元）';

/**
 * Whether a zip entry (its name decoded) is the detail file rather than its summary
 * (`…_业务明细(汇总).csv`), whichever parentheses the summary's name uses.
 */
export function isDetailEntryName(name: string): boolean {
  const base = name.slice(name.lastIndexOf('/') + 1);
  return base.endsWith('业务明细.csv') && !base.includes('汇总');
}

/** A cell without the tab Alipay appends to identifiers, nor surrounding blanks. */
export function cellText(cell: string | undefined): string {
  return (cell ?? '').replace(/^[\s\t]+|[\s\t]+$/g, '');
}

/** Header names compared as written, whichever width of parentheses the file used. */
function headerName(cell: string): string {
  return cellText(cell).replaceAll('(', '（').replaceAll(')', '）');
}

/**
 * A signed yuan amount with at most `decimals` decimals, as an integer of 10^-decimals yuan,
 * from its digits; undefined when the text is not such an amount.
 */
export function scaledYuan(text: string, decimals: number): number | undefined {
  const m = /^([+-]?)(\d{1,13})(?:\.(\d+))?$/.exec(text);
  if (!m || (m[3] ?? '').length > decimals) return undefined;
  const whole = Number(m[2]) * 10 ** decimals + Number((m[3] ?? '').padEnd(decimals, '0'));
  if (!Number.isSafeInteger(whole)) return undefined;
  return m[1] === '-' && whole !== 0 ? -whole : whole;
}

/**
 * CSV records from text given in pieces, as RFC 4180 has them (`"` quotes a field, `""` is a
 * quote inside one, a quoted field may hold commas and line breaks; CRLF or LF ends a record),
 * read leniently where Alipay's files are not strict: a quote inside an unquoted field, or text
 * after a closing quote, is kept as it is.
 */
export class CsvRecords {
  private record: string[] = [];
  private field = '';
  /** Inside a quoted field; `quoteSeen`: its last character was a quote (closing, or the first of `""`). */
  private quoted = false;
  private quoteSeen = false;
  /** Whether the field has any character yet (only a field's first character may open a quote). */
  private started = false;
  /** A record just ended on CR: an LF right after it is the same line end. */
  private afterCr = false;

  /** The records completed by this piece of text. */
  push(text: string): string[][] {
    const done: string[][] = [];
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      const afterCr = this.afterCr;
      this.afterCr = false;
      if (this.quoted) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (ch === '"') {
            this.field += '"';
            continue;
          }
          this.quoted = false;
        } else {
          if (ch === '"') this.quoteSeen = true;
          else this.field += ch;
          continue;
        }
      }
      if (ch === ',') {
        this.record.push(this.field);
        this.field = '';
        this.started = false;
      } else if (ch === '\r' || ch === '\n') {
        if (ch === '\n' && afterCr) continue;
        this.afterCr = ch === '\r';
        this.record.push(this.field);
        done.push(this.record);
        this.record = [];
        this.field = '';
        this.started = false;
      } else if (ch === '"' && !this.started) {
        this.quoted = true;
        this.started = true;
      } else {
        this.field += ch;
        this.started = true;
      }
    }
    return done;
  }

  /** The last record, when the text did not end with a line end. */
  end(): string[][] {
    if (this.quoted && !this.quoteSeen) {
      throw new ChannelError('invalid_response', 'the Alipay trade statement ends inside a quoted value');
    }
    const last =
      this.record.length > 0 || this.started || this.field !== '' ? [[...this.record, this.field]] : [];
    this.record = [];
    this.field = '';
    this.quoted = false;
    this.quoteSeen = false;
    this.started = false;
    return last;
  }
}

type Section = 'before' | 'header' | 'details' | 'after';

/** What a comment line is, if it is one of the two markers (however many dashes surround it). */
function markerOf(record: readonly string[]): 'start' | 'end' | undefined {
  const line = record.join(',').trim();
  if (!line.startsWith('#')) return undefined;
  const word = line.replace(/^#-*|-*$/g, '');
  if (word === '业务明细列表') return 'start';
  if (word === '业务明细列表结束') return 'end';
  return undefined;
}

/**
 * Reads the records of one detail file, in order (`push` each, then `end`): rows come from the
 * lines between the markers, by the header that follows the start marker. Anything that
 * cannot be read is a ChannelError('invalid_response') naming its line.
 */
export class TradeStatementReader {
  private section: Section = 'before';
  private columns = new Map<string, number>();
  private line = 0;

  push(record: readonly string[]): StatementRow | undefined {
    this.line++;
    const comment = (record[0] ?? '').trimStart().startsWith('#');
    const marker = comment ? markerOf(record) : undefined;
    if (this.section === 'details') {
      // Between the markers every line but the end marker is a detail line, even one whose
      // first value (a 商品名称, in another column order) starts with `#`.
      if (marker === 'end') {
        this.section = 'after';
        return undefined;
      }
      if (marker !== undefined) this.fail(`an unexpected ${marker} marker`);
      if (record.every((cell) => cellText(cell) === '')) return undefined;
      return this.row(record);
    }
    if (marker === 'start' && this.section === 'before') this.section = 'header';
    else if (marker !== undefined) this.fail(`an unexpected ${marker} marker`);
    else if (this.section === 'header' && !comment) this.readHeader(record);
    return undefined;
  }

  /** The file ended: it must have held the whole detail section. */
  end(): void {
    if (this.section === 'before') this.fail('no 业务明细列表 marker line', false);
    if (this.section !== 'after') this.fail('the file ends before the 业务明细列表结束 marker line', false);
  }

  private readHeader(record: readonly string[]): void {
    record.forEach((cell, i) => {
      const name = headerName(cell);
      if (name !== '' && !this.columns.has(name)) this.columns.set(name, i);
    });
    const missing = NEEDED.filter((name) => !this.columns.has(name));
    if (missing.length > 0) this.fail(`the header has no ${missing.join(', ')}`);
    this.section = 'details';
  }

  private cell(record: readonly string[], name: string): string {
    const i = this.columns.get(name);
    return i === undefined ? '' : cellText(record[i]);
  }

  private row(record: readonly string[]): StatementRow {
    const type = this.cell(record, '业务类型');
    const kind = type === '交易' ? 'payment' : type === '退款' ? 'refund' : undefined;
    if (kind === undefined) this.fail(`业务类型 ${JSON.stringify(type)} is neither 交易 nor 退款`);
    const tradeNo = this.cell(record, '商户订单号');
    if (tradeNo === '') this.fail('商户订单号 is empty');
    const refundNo = this.cell(record, '退款批次号/请求号');
    if (kind === 'refund' && refundNo === '') this.fail('a refund line without 退款批次号/请求号');
    const stated = scaledYuan(this.cell(record, '订单金额（元）'), 2);
    if (stated === undefined) this.fail('订单金额（元） is not an amount');
    // A refund line states what went back to the buyer as a negative amount.
    if (kind === 'payment' && stated < 0) this.fail('a payment line with a negative 订单金额（元）');
    const feeText = this.cell(record, FEE);
    const fee = feeText === '' ? 0 : scaledYuan(feeText, 5);
    if (fee === undefined) this.fail(`${FEE} is not an amount`);
    const time = parseBeijingTime(this.cell(record, '完成时间'));
    if (time === undefined) this.fail('完成时间 is not a yyyy-MM-dd HH:mm:ss time');
    return {
      kind,
      tradeNo,
      refundNo: kind === 'refund' ? refundNo : null,
      channelNo: this.cell(record, '支付宝交易号') || null,
      amount: Math.abs(stated),
      fee,
      status: 'success',
      time,
    };
  }

  private fail(why: string, atLine = true): never {
    throw new ChannelError(
      'invalid_response',
      `the Alipay trade statement cannot be read: ${why}${atLine ? ` (line ${this.line})` : ''}`,
    );
  }
}
