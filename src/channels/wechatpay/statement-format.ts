/**
 * WeChat Pay's trade statement (交易账单, `bill_type=ALL`) read line by line into StatementRows,
 * with no I/O: the file around it (gzip, SHA-1) is read by statement-file.ts.
 *
 * The published format: a UTF-8 BOM, one header line, detail lines whose every value starts with
 * a backtick, then a summary header (总交易单数,…) and summary lines, which are not rows. Nothing
 * is quoted: a detail line is split on ",`", so the commas a buyer-facing 商品名称 may hold stay
 * inside their value. Columns are read by their header's name, because the layout differs by
 * merchant: today's ALL has 27 columns; merchants on the older layout get 24 (总金额 instead of
 * 订单金额, 子商户号 instead of 特约商户号, no 应结订单金额) and an older summary.
 *
 * Amounts are yuan with two decimals, converted to fen on the digits (a float multiply turns
 * 0.29 into 28.999…); 手续费 has up to five decimals, converted to thousandths of a fen.
 */
import { ChannelError } from '../errors';
import type { StatementRow } from '../ports';

/** The 27 columns of today's ALL statement, in WeChat's order. */
export const TRADEBILL_ALL_COLUMNS = [
  '交易时间',
  '公众账号ID',
  '商户号',
  '特约商户号',
  '设备号',
  '微信订单号',
  '商户订单号',
  '用户标识',
  '交易类型',
  '交易状态',
  '付款银行',
  '货币种类',
  '应结订单金额',
  '代金券金额',
  '微信退款单号',
  '商户退款单号',
  '退款金额',
  '充值券退款金额',
  '退款类型',
  '退款状态',
  '商品名称',
  '商户数据包',
  '手续费',
  '费率',
  '订单金额',
  '申请退款金额',
  '费率备注',
] as const;

/** The 24 columns of the older layout some merchants still receive. */
export const TRADEBILL_LEGACY_COLUMNS = [
  '交易时间',
  '公众账号ID',
  '商户号',
  '子商户号',
  '设备号',
  '微信订单号',
  '商户订单号',
  '用户标识',
  '交易类型',
  '交易状态',
  '付款银行',
  '货币种类',
  '总金额',
  '企业红包金额',
  '微信退款单号',
  '商户退款单号',
  '退款金额',
  '企业红包退款金额',
  '退款类型',
  '退款状态',
  '商品名称',
  '商户数据包',
  '手续费',
  '费率',
] as const;

/** The summary's first column, in every layout: where the detail lines end. */
export const TRADEBILL_SUMMARY_FIRST_COLUMN = '总交易单数';

const BOM = '\ufeff';

/**
 * The adjacent values a merchant wrote freely (the order's description and attach), the only ones
 * that may hold the ",`" separator themselves.
 */
const FREE_TEXT = new Set(['商品名称', '商户数据包']);

/**
 * Yuan with at most `decimals` decimals ("12.34", "-0.01", "0", "0.0") as an integer count of
 * 10^-decimals yuan, exactly. Anything else is not what WeChat publishes: invalid_response.
 */
export function decimalToUnits(text: string, decimals: number, what: string): number {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match || (match[3] ?? '').length > decimals) {
    throw new ChannelError('invalid_response', `WeChat Pay statement: ${what} "${text}" is not an amount`);
  }
  const [, sign, whole, fraction = ''] = match;
  const units = Number(`${whole}${fraction.padEnd(decimals, '0')}`);
  if (!Number.isSafeInteger(units)) {
    throw new ChannelError('invalid_response', `WeChat Pay statement: ${what} "${text}" is out of range`);
  }
  return sign === '-' && units !== 0 ? -units : units;
}

/** Yuan with two decimals → fen. */
export const yuanToFen = (text: string, what: string): number => decimalToUnits(text, 2, what);
/** A fee in yuan with up to five decimals → thousandths of a fen (1 yuan = 100 000). */
export const yuanToMilliFen = (text: string, what: string): number => decimalToUnits(text, 5, what);

/** "YYYY-MM-DD HH:mm:ss" in China Standard Time (no daylight saving), as an instant. */
export function shanghaiTime(text: string): Date {
  if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text)) {
    throw new ChannelError('invalid_response', `WeChat Pay statement: 交易时间 "${text}" is not a time`);
  }
  const at = new Date(`${text.replace(' ', 'T')}+08:00`);
  if (Number.isNaN(at.getTime())) {
    throw new ChannelError('invalid_response', `WeChat Pay statement: 交易时间 "${text}" is not a time`);
  }
  return at;
}

/**
 * 退款状态 → the row's status. PROCESSING is still under way; SUCCESS is done; every other
 * state WeChat lists (CHANGE/ABNORMAL: the buyer's account could not take it; FAIL; CLOSED) means
 * the money did not reach the buyer, which reconciliation reads as `failed`.
 */
export function refundStatusOf(text: string): StatementRow['status'] {
  if (text === 'SUCCESS') return 'success';
  if (text === 'PROCESSING') return 'processing';
  return 'failed';
}

/** The cells of a detail line, by header name; columns a short line leaves out read as absent. */
type Cells = (name: string) => string | undefined;

/**
 * Reads a statement's lines in order, one at a time (`line` answers the line's row, or null for
 * a line that is not a row), keeping nothing but the header: a file of any length reads in flat
 * memory.
 */
export class TradebillReader {
  private header: string[] | undefined;
  private firstFreeText = -1;
  private lastFreeText = -1;
  private inSummary = false;
  private lineNo = 0;

  /** One line, without its line break. */
  line(raw: string): StatementRow | null {
    this.lineNo++;
    const text = this.lineNo === 1 && raw.startsWith(BOM) ? raw.slice(1) : raw;
    if (text.trim() === '') return null;
    if (this.header === undefined) {
      this.readHeader(text);
      return null;
    }
    if (this.inSummary) return null;
    if (text.startsWith(TRADEBILL_SUMMARY_FIRST_COLUMN)) {
      this.inSummary = true;
      return null;
    }
    if (!text.startsWith('`')) {
      throw this.error('a detail line does not start with a backtick');
    }
    return this.row(this.cells(text.slice(1).split(',`')));
  }

  /** Whether the header was read: a file without one is not a statement. */
  get started(): boolean {
    return this.header !== undefined;
  }

  private readHeader(text: string): void {
    const header = text.split(',').map((name) => name.trim());
    for (const required of ['交易时间', '交易状态', '商户订单号', '微信订单号', '手续费']) {
      if (!header.includes(required)) throw this.error(`the header has no ${required} column`);
    }
    this.header = header;
    const free = header.flatMap((name, i) => (FREE_TEXT.has(name) ? [i] : []));
    this.firstFreeText = free.length === 0 ? -1 : Math.min(...free);
    this.lastFreeText = free.length === 0 ? -1 : Math.max(...free);
  }

  /**
   * A line with more values than the header has columns has ",`" inside a free-text value: the
   * columns before the free-text ones are read from the left, those after from the right. A line
   * with fewer (as in some published samples) simply lacks its last columns.
   */
  private cells(values: string[]): Cells {
    const header = this.header!;
    const extra = values.length - header.length;
    const index = new Map(header.map((name, i) => [name, i]));
    return (name) => {
      const i = index.get(name);
      if (i === undefined) return undefined;
      if (extra > 0 && this.lastFreeText >= 0) {
        if (i > this.lastFreeText) return values[i + extra];
        if (i >= this.firstFreeText) return undefined;
      }
      return values[i];
    };
  }

  private row(cell: Cells): StatementRow | null {
    const required = (name: string): string => {
      const value = cell(name);
      if (value === undefined) throw this.error(`the line has no ${name}`);
      return value;
    };
    const present = (name: string): string | undefined => {
      const value = cell(name);
      return value === undefined || value === '' ? undefined : value;
    };
    const state = required('交易状态');
    // A 付款码 trade its reverse (撤销) closed or gave back settles nothing: its order is closed
    // (`reversed`), never a payment of the day.
    if (state === 'REVOKED') return null;
    const tradeNo = required('商户订单号');
    const channelTradeNo = present('微信订单号') ?? null;
    const time = shanghaiTime(required('交易时间'));
    const fee = yuanToMilliFen(present('手续费') ?? '0', '手续费');
    if (state === 'SUCCESS') {
      // durapay's order amount is the order's total: 订单金额 (总金额 on the older layout), not
      // 应结订单金额, which is the total less 免充值券 the merchant funded. Samples that stop before
      // 订单金额 fall back on 应结订单金额, equal to it without such coupons.
      const amountText = present('订单金额') ?? present('总金额') ?? present('应结订单金额');
      if (amountText === undefined) throw this.error('the line has no 订单金额');
      return {
        kind: 'payment',
        tradeNo,
        refundNo: null,
        channelNo: channelTradeNo,
        amount: this.nonNegative(yuanToFen(amountText, '订单金额'), '订单金额'),
        fee,
        status: 'success',
        time,
      };
    }
    if (state === 'REFUND') {
      // durapay's refund amount is what it asked for: 申请退款金额, not 退款金额 (the asked amount
      // less 免充值券 refunded), which the older layout, without 申请退款金额, only has.
      const amountText = present('申请退款金额') ?? present('退款金额');
      if (amountText === undefined) throw this.error('the line has no 申请退款金额');
      return {
        kind: 'refund',
        tradeNo,
        refundNo: required('商户退款单号'),
        channelNo: present('微信退款单号') ?? null,
        amount: this.nonNegative(yuanToFen(amountText, '申请退款金额'), '申请退款金额'),
        fee,
        status: refundStatusOf(present('退款状态') ?? ''),
        time,
      };
    }
    throw this.error(`交易状态 "${state}" is not one WeChat Pay publishes`);
  }

  private nonNegative(amount: number, what: string): number {
    if (amount < 0) throw this.error(`${what} is negative`);
    return amount;
  }

  private error(reason: string): ChannelError {
    return new ChannelError('invalid_response', `WeChat Pay statement, line ${this.lineNo}: ${reason}`);
  }
}
