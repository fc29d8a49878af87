/**
 * The trade statement (alipay.data.dataservice.bill.downloadurl.query, bill_type `trade`, or
 * `trade_zft_merchant` with an smid): a link on this gateway, usable for 30 seconds, to a zip of
 * the day's detail and summary files as Alipay publishes them — GBK entry names without the
 * UTF-8 flag, GBK CSV, comment lines, the marker lines around the detail lines, identifier cells
 * ending with a tab, refunds as negative amounts. Built from the trades and refunds the gateway
 * holds for the calling merchant (its app_auth_token's, or the smid's) on that Beijing day.
 *
 * A paid trade that alipay.trade.cancel gave back is on no line: a cancel reaches only the day's
 * payments and undoes one whole, fee included, as if it had not happened (as durapay's reader,
 * src/channels/alipay/statement-format.ts, takes Alipay's statement to be). A barcode payment's
 * shop, operator and till are its 门店编号, 操作员 and 终端号.
 *
 * Unlike Alipay, which only has a day's statement the morning after, today's is served too (a
 * test cannot wait a day); a day without a line answers isp.bill_not_exist, as Alipay does both
 * for a day without trades and for a statement not generated yet.
 *
 * Faults, for reconciliation's tests: a trade whose subject holds `[statement:amount+1]` is on
 * the statement at 1 fen more than it was paid; `[statement:omit]` leaves its payment line off.
 * A test holds a day back (`hold`: isp.bill_not_exist for the next requests) and makes links
 * that have expired before they are used (`expireNextLinks`).
 */
import { createHash, randomBytes } from 'node:crypto';
import iconv from 'iconv-lite';
import Joi from 'joi';
import type { AlipayGateway, Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import type { RefundRecord, TradeRecord } from './store';
import { yuan } from './views';
import { beijingTime, businessFailed, parseBeijingTime } from './wire';
import { zipBuffer } from './zip';

export const BILL_METHOD = 'alipay.data.dataservice.bill.downloadurl.query';
/** Where the links point, under the gateway's mount (Alipay's is on dwbillcenter.alipay.com). */
export const BILL_DOWNLOAD_PATH = '/downloadBillFile.resource';

export const STATEMENT_AMOUNT_PLUS_ONE = '[statement:amount+1]';
export const STATEMENT_OMIT = '[statement:omit]';

/** How long a link works, as Alipay documents it. */
const LINK_LIFETIME_MS = 30_000;
const DAY_MS = 86_400_000;
const BEIJING_OFFSET_MS = 8 * 3_600_000;

const START_LINE =
  '#-----------------------------------------业务明细列表----------------------------------------';
const END_LINE =
  '#-----------------------------------------业务明细列表结束------------------------------------';
const DETAIL_HEADER = [
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
];
const SUMMARY_HEADER = [
  '门店编号',
  '门店名称',
  '交易订单总笔数',
  '退款订单总笔数',
  '订单金额（元）',
  '商家实收（元）',
  '支付宝优惠（元）',
  '商家优惠（元）',
  '卡消费金额（元）',
  '服务费（元）',
  '分润（元）',
  '实收净额（元）',
];

interface BillRequest {
  bill_type: 'trade' | 'trade_zft_merchant' | 'signcustomer';
  bill_date: string;
  smid?: string;
}

const billSchema = Joi.object<BillRequest>({
  bill_type: Joi.string().valid('trade', 'trade_zft_merchant', 'signcustomer').required(),
  bill_date: Joi.string()
    .pattern(/^\d{4}-\d{2}(?:-\d{2})?$/)
    .required(),
  smid: Joi.string().pattern(/^2088\d{12}$/),
}).required();

const invalidArguments = (why: string) => businessFailed('isv.invalid_arguments', `入参不合法: ${why}`);
const billNotExist = () => businessFailed('isp.bill_not_exist', '账单不存在');

/** One line of the detail file, before it is written out. */
interface Line {
  trade: TradeRecord;
  refund?: RefundRecord;
  amountFen: number;
  /** 服务费 in fen, signed as written. */
  feeFen: number;
  at: number;
}

/** Alipay's 0.6% rate on a payment, in whole fen, rounded half up, on integers. */
const feeOf = (fen: number) => Math.floor((fen * 6 + 500) / 1000);

function signedYuan(fen: number): string {
  return fen < 0 ? `-${yuan(-fen)}` : yuan(fen);
}

/** A CSV cell, quoted when it holds what would split it (a 商品名称 with a comma). */
function cell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A text field of the order as a cell, or an empty one. */
function text(value: unknown): string {
  return typeof value === 'string' ? cell(value) : '';
}

/** `2019年09月16日 00:00:00`, as the comment lines write a moment. */
function chineseTime(ms: number): string {
  const t = beijingTime(ms);
  return `${t.slice(0, 4)}年${t.slice(5, 7)}月${t.slice(8, 10)}日 ${t.slice(11)}`;
}

function detailLine(line: Line): string {
  const { trade, refund } = line;
  const buyer = trade.buyerLogonId ? `*买家(${trade.buyerLogonId})` : '';
  const cells = [
    `${trade.tradeNo}\t`,
    `${trade.order.out_trade_no}\t`,
    `${refund ? '退款' : '交易'}\t`,
    cell(trade.order.subject),
    beijingTime(trade.createdAt ?? line.at),
    beijingTime(line.at),
    `${text(trade.order.store_id)}\t`,
    '\t',
    `${text(trade.order.operator_id)}\t`,
    `${text(trade.order.terminal_id)}\t`,
    `${buyer}\t`,
    signedYuan(refund ? -line.amountFen : line.amountFen),
    signedYuan(refund ? -line.amountFen : line.amountFen),
    '0.00',
    '0.00',
    '0.00',
    '0.00',
    '0.00',
    '',
    '0.00\t',
    '0.00',
    `${refund ? refund.outRequestNo : ''}\t`,
    signedYuan(line.feeFen),
    '0.00',
    cell(trade.order.body ?? ''),
  ];
  return cells.join(',');
}

/** The detail file's text: comments, the markers, the header and the lines, with totals after. */
function detailFile(account: string, dayStart: number, lines: Line[], now: number): string {
  const payments = lines.filter((l) => !l.refund);
  const refunds = lines.filter((l) => l.refund);
  const sum = (ls: Line[]) => ls.reduce((total, l) => total + l.amountFen, 0);
  return [
    '#支付宝业务明细查询',
    `#账号：[${account}]`,
    `#起始日期：[${chineseTime(dayStart)}]   终止日期：[${chineseTime(dayStart + DAY_MS)}]`,
    START_LINE,
    DETAIL_HEADER.join(','),
    ...lines.map(detailLine),
    END_LINE,
    `#交易合计：${payments.length}笔，商家实收共${signedYuan(sum(payments))}元，商家优惠共0.00元`,
    `#退款合计：${refunds.length}笔，商家实收退款共${signedYuan(-sum(refunds))}元，商家优惠退款共0.00元`,
    `#导出时间：[${chineseTime(now)}]`,
    '',
  ].join('\r\n');
}

function summaryFile(account: string, dayStart: number, lines: Line[], now: number): string {
  const payments = lines.filter((l) => !l.refund).length;
  const net = lines.reduce((total, l) => total + (l.refund ? -l.amountFen : l.amountFen), 0);
  const fees = lines.reduce((total, l) => total + l.feeFen, 0);
  const total = [
    '合计',
    '',
    String(payments),
    String(lines.length - payments),
    signedYuan(net),
    signedYuan(net),
    '0.00',
    '0.00',
    '0.00',
    signedYuan(fees),
    '0.00',
    signedYuan(net - fees),
  ];
  return [
    '#支付宝业务汇总查询',
    `#账号：[${account}]`,
    `#起始日期：[${chineseTime(dayStart)}]   终止日期：[${chineseTime(dayStart + DAY_MS)}]`,
    '#-----------------------------------------业务汇总列表----------------------------------------',
    SUMMARY_HEADER.join(','),
    total.join(','),
    '#-----------------------------------------业务汇总列表结束------------------------------------',
    `#导出时间：[${chineseTime(now)}]`,
    '',
  ].join('\r\n');
}

interface Link {
  zip: Buffer;
  fileName: string;
  expiresAt: number;
}

/** The statements the gateway hands out, and the faults a test sets on them. */
export class StatementDesk {
  private readonly holds = new Map<string, number>();
  private readonly links = new Map<string, Link>();
  private deadLinks = 0;
  private lifetimeMs = LINK_LIFETIME_MS;

  /** The next `requests` asks for `day`'s statement answer isp.bill_not_exist (not generated yet). */
  hold(day: string, requests: number): void {
    if (requests <= 0) this.holds.delete(day);
    else this.holds.set(day, requests);
  }

  /** The next `count` links are handed out already expired, as if used too late. */
  expireNextLinks(count = 1): void {
    this.deadLinks = Math.max(0, count);
  }

  /** How long the links handed out from now on work (30 s unless a test says otherwise). */
  setLinkLifetime(ms: number): void {
    this.lifetimeMs = ms;
  }

  /** A link's file, `expired` after its time, or undefined when the gateway never made it. */
  download(token: string, now: number): Link | 'expired' | undefined {
    const link = this.links.get(token);
    if (!link) return undefined;
    return now >= link.expiresAt ? 'expired' : link;
  }

  handler(gateway: AlipayGateway): Handler {
    return async (call) => {
      const body = validateBiz(billSchema, parseBizContent(call.params));
      if (body.bill_type === 'signcustomer' || body.bill_date.length !== 10) {
        throw invalidArguments('the offline gateway has daily trade statements only');
      }
      const zft = body.bill_type === 'trade_zft_merchant';
      if (zft !== (body.smid !== undefined)) {
        throw invalidArguments('smid is given with bill_type trade_zft_merchant, and only with it');
      }
      const dayStart = parseBeijingTime(`${body.bill_date} 00:00:00`);
      if (dayStart === undefined) throw invalidArguments(`bill_date ${body.bill_date}`);
      if (dayStart > call.now) throw invalidArguments('bill_date is in the future');
      const merchant = gateway.merchantOf(call);
      const held = this.holds.get(body.bill_date) ?? 0;
      if (held > 0) {
        this.holds.set(body.bill_date, held - 1);
        throw billNotExist();
      }
      const lines = this.linesOf(gateway, merchant, body.smid, dayStart, call.now);
      if (lines.length === 0) throw billNotExist();
      const account = `${accountOf(merchant, body.smid, gateway.options.keys.sellerId)}0156`;
      const day = body.bill_date.replaceAll('-', '');
      const gbk = (text: string) => iconv.encode(text, 'gbk');
      const zip = await zipBuffer([
        {
          name: gbk(`${account}_${day}_业务明细.csv`),
          content: [gbk(detailFile(account, dayStart, lines, call.now))],
        },
        {
          name: gbk(`${account}_${day}_业务明细(汇总).csv`),
          content: [gbk(summaryFile(account, dayStart, lines, call.now))],
        },
      ]);
      return { bill_download_url: this.issue(gateway.options.base, zip, account, day, call.now) };
    };
  }

  private issue(base: string, zip: Buffer, account: string, day: string, now: number): string {
    for (const [token, link] of this.links) if (now >= link.expiresAt) this.links.delete(token);
    const token = randomBytes(16).toString('hex');
    const fileName = `${account}_${day}.csv.zip`;
    const dead = this.deadLinks > 0;
    if (dead) this.deadLinks--;
    this.links.set(token, { zip, fileName, expiresAt: dead ? now : now + this.lifetimeMs });
    const query = new URLSearchParams({
      bizType: 'trade',
      userId: account,
      fileType: 'csv.zip',
      bizDates: day,
      downloadFileName: fileName,
      timestamp: String(now),
      token,
    });
    return `${base}${BILL_DOWNLOAD_PATH}?${query.toString()}`;
  }

  /** The day's lines of the merchant's trades (an smid's alone, when one is named), by time. */
  private linesOf(
    gateway: AlipayGateway,
    merchant: string | undefined,
    smid: string | undefined,
    dayStart: number,
    now: number,
  ): Line[] {
    const inDay = (at: number | undefined): at is number =>
      at !== undefined && at >= dayStart && at < dayStart + DAY_MS;
    const lines: Line[] = [];
    for (const found of gateway.trades.all()) {
      if ((found.context.merchant ?? null) !== (merchant ?? null)) continue;
      if (smid !== undefined && found.order.sub_merchant?.merchant_id !== smid) continue;
      const trade = gateway.touch(found, now);
      const subject = trade.order.subject;
      const givenBack = trade.cancelled?.action === 'refund';
      if (inDay(trade.paidAt) && !givenBack && !subject.includes(STATEMENT_OMIT)) {
        const amountFen = trade.totalFen + (subject.includes(STATEMENT_AMOUNT_PLUS_ONE) ? 1 : 0);
        lines.push({ trade, amountFen, feeFen: feeOf(amountFen), at: trade.paidAt });
      }
      for (const refund of trade.refunds) {
        if (refund.status !== 'REFUND_SUCCESS' || !inDay(refund.doneAt)) continue;
        // A refund gives back its share of the fee.
        lines.push({
          trade,
          refund,
          amountFen: refund.amountFen,
          feeFen: -feeOf(refund.amountFen),
          at: refund.doneAt,
        });
      }
    }
    return lines.sort((a, b) => a.at - b.at);
  }
}

/** The 2088… account a statement is of: the authorising merchant's, the smid, or the app owner's. */
function accountOf(merchant: string | undefined, smid: string | undefined, sellerId: string): string {
  if (smid !== undefined) return smid;
  const authorised = merchant && /^auth:[^:]*:(2088\d{12})$/.exec(merchant);
  if (authorised) return authorised[1]!;
  // A token the gateway never granted: a made-up account that stays the same for it.
  if (merchant) {
    const digits = BigInt(`0x${createHash('sha256').update(merchant).digest('hex').slice(0, 15)}`);
    return `2088${String(digits % 10n ** 12n).padStart(12, '0')}`;
  }
  return sellerId;
}

/** Beijing day (YYYY-MM-DD) of a moment, for tests that name today's statement. */
export function beijingDay(ms: number): string {
  return new Date(ms + BEIJING_OFFSET_MS).toISOString().slice(0, 10);
}
