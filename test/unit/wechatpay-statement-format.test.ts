/**
 * durapay's reader of WeChat Pay's trade statement (tradebill ALL, gzip, SHA-1): published sample
 * files read row by row, statements generated here in any layout and order read back exactly,
 * a file whose hash differs refused, and a million lines read in flat memory.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { gzipSync, createGzip } from 'node:zlib';
import fc from 'fast-check';
import { ChannelError } from '../../src/channels/errors';
import type { StatementRow } from '../../src/channels/ports';
import { TRADEBILL_GZIP_FORMAT, readTradebillFile } from '../../src/channels/wechatpay/statement-file';
import {
  TRADEBILL_ALL_COLUMNS,
  TRADEBILL_LEGACY_COLUMNS,
  refundStatusOf,
  yuanToFen,
  yuanToMilliFen,
} from '../../src/channels/wechatpay/statement-format';
import { liveHeapBytes } from '../support/heap';

jest.setTimeout(120_000);

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'wechatpay');
let dir: string;
let files = 0;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'durapay-tradebill-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The text gzipped to a file, as `fetch` leaves it, and the hash WeChat would publish for it. */
function gzFile(text: Buffer): { file: string; channelHash: string } {
  const file = path.join(dir, `bill-${files++}.gz`);
  writeFileSync(file, gzipSync(text));
  return { file, channelHash: `SHA1:${createHash('sha1').update(text).digest('hex')}` };
}

async function rowsOf(text: Buffer, channelHash?: string | null): Promise<StatementRow[]> {
  const written = gzFile(text);
  const rows: StatementRow[] = [];
  for await (const row of readTradebillFile(
    written.file,
    TRADEBILL_GZIP_FORMAT,
    channelHash === undefined ? written.channelHash : channelHash,
  )) {
    rows.push(row);
  }
  return rows;
}

const at = (text: string) => new Date(`${text.replace(' ', 'T')}+08:00`);

describe('published samples', () => {
  test('when the v3 sample statement is read with its published hash, then its three payments come out exactly', async () => {
    const text = readFileSync(path.join(FIXTURES, 'tradebill-v3-sample.csv'));
    const rows = await rowsOf(text, 'SHA1:dcd7ceb3d382a1181798368bb15d8437de46c00f');
    const payment = (time: string, channelNo: string, tradeNo: string): StatementRow => ({
      kind: 'payment',
      tradeNo,
      refundNo: null,
      channelNo,
      amount: 1,
      fee: 0,
      status: 'success',
      time: at(time),
    });
    expect(rows).toEqual([
      payment('2021-01-28 17:07:11', '4200000925202101284997714292', 'S20210128170702357723'),
      payment('2021-01-28 15:35:18', '4200000910202101282955148400', 'S20210128153505214586'),
      payment('2021-01-28 16:59:46', '4200000926202101281412639609', 'S20210128165824499930'),
    ]);
  });

  test('when WxJava’s ALL sample is read (a line that stops after 费率, no BOM), then its payment comes out with 应结订单金额 as the amount', async () => {
    const rows = await rowsOf(readFileSync(path.join(FIXTURES, 'tradebill-wxjava-all.csv')));
    expect(rows).toEqual([
      {
        kind: 'payment',
        tradeNo: '1415640626',
        refundNo: null,
        channelNo: '1001690740201411100005734289',
        amount: 1,
        fee: 0,
        status: 'success',
        time: at('2014-11-10 16:33:45'),
      },
    ]);
  });

  test('when a service provider’s statement in the older layout is read, then its refund lines come out as refunds, by 子商户号’s header names', async () => {
    const rows = await rowsOf(readFileSync(path.join(FIXTURES, 'tradebill-legacy-partner.csv')));
    const refund = (time: string, tradeNo: string, channelNo: string, refundNo: string): StatementRow => ({
      kind: 'refund',
      tradeNo,
      refundNo,
      channelNo,
      amount: 1,
      fee: 0,
      status: 'success',
      time: at(time),
    });
    expect(rows).toEqual([
      refund(
        '2018-08-21 18:13:12',
        '2018082010',
        '50000707812018082106030155182',
        '1012413262018082023005236551534846383',
      ),
      refund(
        '2018-08-21 18:11:15',
        '2018082012',
        '50000307952018082106030149502',
        '1012413262018082093528911551534846254',
      ),
      refund(
        '2018-08-21 18:12:38',
        '2018082011',
        '50000307862018082106030153581',
        '1012413262018082061125989071534846349',
      ),
    ]);
  });
});

describe('amounts', () => {
  test('when yuan are converted, then the fen are exact where a float multiply is not', () => {
    expect(yuanToFen('0.29', 'x')).toBe(29);
    expect(0.29 * 100).not.toBe(29);
    expect(yuanToFen('1.1', 'x')).toBe(110);
    expect(yuanToFen('0', 'x')).toBe(0);
    expect(yuanToFen('-0.00', 'x')).toBe(0);
    expect(yuanToFen('21474836.47', 'x')).toBe(2 ** 31 - 1);
    expect(yuanToMilliFen('-0.00600', 'x')).toBe(-600);
    expect(yuanToMilliFen('7.79000', 'x')).toBe(779_000);
    expect(() => yuanToFen('0.001', 'x')).toThrow(ChannelError);
    expect(() => yuanToFen('1,00', 'x')).toThrow(ChannelError);
    expect(() => yuanToFen('', 'x')).toThrow(ChannelError);
  });

  test('when 退款状态 is read, then SUCCESS and PROCESSING keep their meaning and every other state is a failure', () => {
    expect(
      ['SUCCESS', 'PROCESSING', 'CHANGE', 'ABNORMAL', 'FAIL', 'REFUNDCLOSE', ''].map(refundStatusOf),
    ).toEqual(['success', 'processing', 'failed', 'failed', 'failed', 'failed', 'failed']);
  });
});

// ---- statements written here, independently of the reader, and read back ----

type Layout = 'all' | 'legacy';

interface Entry {
  row: StatementRow;
  description: string;
  attach: string;
  wechatRefundState: string;
  /** 免充值券 the merchant funded: 应结订单金额 (退款金额) is the amount less it. */
  coupon: number;
}

const yuanText = (units: number, decimals: number) => {
  const sign = units < 0 ? '-' : '';
  const digits = String(Math.abs(units)).padStart(decimals + 1, '0');
  return `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
};
const shanghai = (d: Date) =>
  new Date(d.getTime() + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');

function detail(entry: Entry, layout: Layout): string {
  const { row } = entry;
  const refund = row.kind === 'refund';
  const byName: Record<string, string> = {
    交易时间: shanghai(row.time),
    公众账号ID: 'wx2421b1c4370ec43b',
    商户号: '1900000100',
    特约商户号: '1900000109',
    子商户号: '1900000109',
    设备号: '',
    微信订单号: refund ? '4200000001' : (row.channelNo ?? ''),
    商户订单号: row.tradeNo,
    用户标识: 'oUpF8uMuAJO',
    交易类型: 'JSAPI',
    交易状态: refund ? 'REFUND' : 'SUCCESS',
    付款银行: 'OTHERS',
    货币种类: 'CNY',
    应结订单金额: refund ? '0.00' : yuanText(row.amount - (layout === 'all' ? entry.coupon : 0), 2),
    总金额: refund ? '0.00' : yuanText(row.amount, 2),
    代金券金额: '0.00',
    企业红包金额: '0.00',
    微信退款单号: refund ? (row.channelNo ?? '') : '0',
    商户退款单号: refund ? row.refundNo! : '0',
    退款金额: refund ? yuanText(row.amount - (layout === 'all' ? entry.coupon : 0), 2) : '0.00',
    充值券退款金额: '0.00',
    企业红包退款金额: '0.00',
    退款类型: refund ? 'ORIGINAL' : '',
    退款状态: refund ? entry.wechatRefundState : '',
    商品名称: entry.description,
    商户数据包: entry.attach,
    手续费: yuanText(row.fee, 5),
    费率: '0.60%',
    订单金额: refund ? '0.00' : yuanText(row.amount, 2),
    申请退款金额: refund ? yuanText(row.amount, 2) : '0.00',
    费率备注: '',
  };
  const columns = layout === 'all' ? TRADEBILL_ALL_COLUMNS : TRADEBILL_LEGACY_COLUMNS;
  return columns.map((name) => `\`${byName[name]}`).join(',');
}

function statement(entries: readonly Entry[], layout: Layout, bom: boolean, eol: string): Buffer {
  const columns = layout === 'all' ? TRADEBILL_ALL_COLUMNS : TRADEBILL_LEGACY_COLUMNS;
  const summary =
    layout === 'all'
      ? [
          '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额',
          '`1,`0.01,`0.00,`0.00,`0.00000,`0.01,`0.00',
        ]
      : ['总交易单数,总交易额,总退款金额,总企业红包退款金额,手续费总金额', '`1,`0.01,`0.00,`0.00,`0.00000'];
  const lines = [columns.join(','), ...entries.map((e) => detail(e, layout)), ...summary];
  return Buffer.from(`${bom ? '\ufeff' : ''}${lines.join(eol)}${eol}`, 'utf8');
}

const reference = fc.stringMatching(/^[A-Za-z0-9_|*@-]{1,32}$/);
/** Free text with what a splitter trips on: commas, backticks, both together, CJK, emoji. */
const freeText = fc
  .array(fc.constantFrom('a', '茶', ',', '`', ',`', ' ', '，', '😀', '"', '\\'), { maxLength: 12 })
  .map((parts) => parts.join(''));
const instant = fc
  .integer({ min: Date.UTC(2015, 0, 1) / 1000, max: Date.UTC(2035, 0, 1) / 1000 })
  .map((s) => new Date(s * 1000));
const amount = fc.oneof(
  fc.constantFrom(0, 1, 9, 10, 99, 100, 101, 2 ** 31 - 1),
  fc.integer({ min: 0, max: 2 ** 31 - 1 }),
);
const fee = fc.oneof(fc.constantFrom(0, 1, 600, 99_999, 100_000), fc.integer({ min: 0, max: 10 ** 12 }));
const refundState = fc.constantFrom('SUCCESS', 'PROCESSING', 'CHANGE', 'FAIL', 'ABNORMAL');

const payment: fc.Arbitrary<Entry> = fc
  .record({
    tradeNo: reference,
    channelNo: reference,
    amount,
    fee,
    time: instant,
    description: freeText,
    attach: freeText,
    coupon: fc.nat({ max: 500 }),
  })
  .map(({ description, attach, coupon, ...r }) => ({
    row: {
      kind: 'payment',
      tradeNo: r.tradeNo,
      refundNo: null,
      channelNo: r.channelNo,
      amount: r.amount,
      fee: r.fee,
      status: 'success',
      time: r.time,
    },
    description,
    attach,
    wechatRefundState: '',
    coupon: Math.min(coupon, r.amount),
  }));
const refund: fc.Arbitrary<Entry> = fc
  .record({
    tradeNo: reference,
    refundNo: reference,
    channelNo: reference,
    amount,
    fee,
    time: instant,
    description: freeText,
    attach: freeText,
    state: refundState,
    coupon: fc.nat({ max: 500 }),
  })
  .map(({ description, attach, state, coupon, ...r }) => ({
    row: {
      kind: 'refund',
      tradeNo: r.tradeNo,
      refundNo: r.refundNo,
      channelNo: r.channelNo,
      amount: r.amount,
      fee: r.fee === 0 ? 0 : -r.fee,
      status: refundStatusOf(state),
      time: r.time,
    },
    description,
    attach,
    wechatRefundState: state,
    coupon: Math.min(coupon, r.amount),
  }));

describe('generated statements', () => {
  test('when any statement is written in either layout, with or without a BOM, CRLF or LF, then reading it gives back its rows in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(payment, refund), { maxLength: 30 }),
        fc.constantFrom<Layout>('all', 'legacy'),
        fc.boolean(),
        fc.constantFrom('\r\n', '\n'),
        async (entries, layout, bom, eol) => {
          const rows = await rowsOf(statement(entries, layout, bom, eol));
          expect(rows).toEqual(entries.map((e) => e.row));
        },
      ),
      { numRuns: 150 },
    );
  });

  test('when the file read is not the one whose hash was published, then the reader throws invalid_response after the last row', async () => {
    const entries = fc.sample(payment, { numRuns: 3, seed: 7 });
    const text = statement(entries, 'all', true, '\r\n');
    const other = createHash('sha1').update('another file').digest('hex');
    const seen: StatementRow[] = [];
    const { file } = gzFile(text);
    const reading = (async () => {
      for await (const row of readTradebillFile(file, TRADEBILL_GZIP_FORMAT, `SHA1:${other}`)) seen.push(row);
    })();
    await expect(reading).rejects.toThrow(new RegExp(`not the published ${other}`));
    await expect(reading).rejects.toBeInstanceOf(ChannelError);
    await expect(reading).rejects.toMatchObject({ kind: 'invalid_response' });
    expect(seen).toHaveLength(3);
  });

  test('when a file is not gzip, or a detail line lost its backtick, then the reader refuses it as invalid_response', async () => {
    const notGzip = path.join(dir, 'plain.gz');
    writeFileSync(notGzip, 'not a gzip file');
    const read = async (file: string, hash: string | null) => {
      for await (const _row of readTradebillFile(file, TRADEBILL_GZIP_FORMAT, hash)) void _row;
    };
    await expect(read(notGzip, null)).rejects.toMatchObject({ kind: 'invalid_response' });
    const broken = Buffer.from(
      statement(fc.sample(payment, { numRuns: 1, seed: 3 }), 'all', true, '\r\n')
        .toString('utf8')
        .replace('\r\n`', '\r\n'),
    );
    await expect(read(gzFile(broken).file, null)).rejects.toMatchObject({ kind: 'invalid_response' });
  });

  test('when a statement holds a REVOKED line, then it is not a row', async () => {
    const [entry] = fc.sample(payment, { numRuns: 1, seed: 5 });
    const text = statement([entry!], 'all', true, '\r\n').toString('utf8').replace('`SUCCESS', '`REVOKED');
    expect(await rowsOf(Buffer.from(text, 'utf8'))).toEqual([]);
  });
});

test('when a statement of 200 000 lines is read, then it streams in flat memory and every row comes out', async () => {
  const file = path.join(dir, 'long.gz');
  const gzip = createGzip();
  const out = createWriteStream(file);
  gzip.pipe(out);
  const hash = createHash('sha1');
  const write = async (text: string) => {
    hash.update(text);
    if (!gzip.write(text)) await once(gzip, 'drain');
  };
  // Long enough that rows kept would show (about 50 MiB), short enough to stay quick on a busy
  // machine: a million lines took over two minutes of CPU beside the integration suites.
  const LINES = 200_000;
  await write(`\ufeff${TRADEBILL_ALL_COLUMNS.join(',')}\r\n`);
  let batch = '';
  for (let i = 0; i < LINES; i++) {
    batch += `\`2026-03-01 10:00:00,\`wx1,\`1900000100,\`1900000109,\`,\`42000${i},\`T${i},\`o1,\`JSAPI,\`SUCCESS,\`OTHERS,\`CNY,\`1.00,\`0.00,\`0,\`0,\`0.00,\`0.00,\`,\`,\`tea, green,\`,\`0.00600,\`0.60%,\`1.00,\`0.00,\`\r\n`;
    if (batch.length > 1 << 20) {
      await write(batch);
      batch = '';
    }
  }
  await write(batch);
  await write(
    '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\r\n`0,`0,`0,`0,`0,`0,`0\r\n',
  );
  gzip.end();
  await once(out, 'finish');

  const before = liveHeapBytes();
  let count = 0;
  let total = 0;
  let peak = 0;
  for await (const row of readTradebillFile(file, TRADEBILL_GZIP_FORMAT, `SHA1:${hash.digest('hex')}`)) {
    count++;
    total += row.amount;
    if (count % 50_000 === 0) peak = Math.max(peak, liveHeapBytes() - before);
  }
  expect(count).toBe(LINES);
  expect(total).toBe(LINES * 100);
  // What the reader holds once garbage is collected: 200 000 rows kept would be about 50 MiB;
  // a stream holds a few buffers (about 0.2 MiB here).
  expect(peak).toBeLessThan(16 * 1024 * 1024);
});
