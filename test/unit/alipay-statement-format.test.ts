/**
 * Reading Alipay's trade statement: the zip of GBK files as Alipay publishes it (the fixture is
 * the published sample of a 业务明细 file, zipped as Alipay does, beside its summary), statements
 * generated in any order with quoted commas, tabs and refunds, files that are not what Alipay
 * sends, and a million detail lines read in flat memory.
 *
 * test/fixtures/alipay/20880211096256330156_20190916.csv.zip holds trade-20190916-detail.csv and
 * trade-20190916-summary.csv (UTF-8 here) as GBK with CRLF line ends, under GBK names without the
 * zip's UTF-8 flag, the summary first; the first test checks the zip still holds exactly them.
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import yauzl from 'yauzl';
import { zipBuffer, zipChunks } from '../../sandbox/alipay';
import {
  ALIPAY_TRADE_STATEMENT_FORMAT,
  CsvRecords,
  TRADE_STATEMENT_COLUMNS,
} from '../../src/channels/alipay/statement-format';
import { alipayStatements, readTradeStatement } from '../../src/channels/alipay/statements';
import type { StatementRow } from '../../src/channels/ports';
import { liveHeapBytes } from '../support/heap';

jest.setTimeout(60_000);

const FIXTURES = join(__dirname, '../fixtures/alipay');
const FIXTURE_ZIP = join(FIXTURES, '20880211096256330156_20190916.csv.zip');
const START =
  '#-----------------------------------------业务明细列表----------------------------------------';
const END = '#-----------------------------------------业务明细列表结束------------------------------------';

let dir = '';
let sequence = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'alipay-statement-format-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const gbk = (text: string) => iconv.encode(text, 'gbk');
const at = (beijing: string) => new Date(`${beijing.replace(' ', 'T')}+08:00`);

async function rowsOf(path: string): Promise<StatementRow[]> {
  const rows: StatementRow[] = [];
  for await (const row of readTradeStatement(path)) rows.push(row);
  return rows;
}

/** A statement zip on disk: the detail file's text (and a summary before it), GBK named. */
async function statementZip(
  detail: string,
  name = '20881234567890120156_20260101_业务明细.csv',
): Promise<string> {
  const path = join(dir, `s${sequence++}.zip`);
  writeFileSync(
    path,
    await zipBuffer([
      {
        name: gbk('20881234567890120156_20260101_业务明细(汇总).csv'),
        content: [gbk('#支付宝业务汇总查询\r\n')],
      },
      { name: gbk(name), content: [gbk(detail)] },
    ]),
  );
  return path;
}

function thrown(promise: Promise<unknown>) {
  return expect(promise).rejects.toMatchObject({ name: 'ChannelError', kind: 'invalid_response' });
}

describe('the published sample', () => {
  const pay = (channelNo: string, tradeNo: string, time: string): StatementRow => ({
    kind: 'payment',
    tradeNo,
    refundNo: null,
    channelNo,
    amount: 1,
    fee: 0,
    status: 'success',
    time: at(time),
  });
  const refund = (channelNo: string, tradeNo: string, refundNo: string, time: string): StatementRow => ({
    kind: 'refund',
    tradeNo,
    refundNo,
    channelNo,
    amount: 1,
    fee: 0,
    status: 'success',
    time: at(time),
  });

  test('when the fixture zip is read, then it holds the published files as GBK under GBK names', async () => {
    const zip = await yauzl.openPromise(FIXTURE_ZIP, { lazyEntries: true, decodeStrings: false });
    const entries: { name: string; flags: number; text: string }[] = [];
    for (;;) {
      zip.readEntry();
      const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
        zip
          .once('entry', resolve)
          .once('end', () => resolve(undefined))
          .once('error', reject);
      });
      zip.removeAllListeners();
      if (!entry) break;
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      entries.push({
        name: iconv.decode(entry.fileNameRaw, 'gbk'),
        flags: entry.generalPurposeBitFlag,
        text: iconv.decode(Buffer.concat(chunks), 'gbk'),
      });
    }
    zip.close();
    expect(entries.map((e) => e.name)).toEqual([
      '20880211096256330156_20190916_业务明细(汇总).csv',
      '20880211096256330156_20190916_业务明细.csv',
    ]);
    const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
    const source = (file: string) => readFileSync(join(FIXTURES, file), 'utf8').replace(/\n/g, '\r\n');
    expect(byName['20880211096256330156_20190916_业务明细.csv']!.text).toBe(
      source('trade-20190916-detail.csv'),
    );
    expect(byName['20880211096256330156_20190916_业务明细(汇总).csv']!.text).toBe(
      source('trade-20190916-summary.csv'),
    );
    expect(entries.every((e) => (e.flags & 0x800) === 0)).toBe(true);
  });

  test('when the published sample is parsed, then its six payments and four refunds come out exactly, in order', async () => {
    expect(await rowsOf(FIXTURE_ZIP)).toEqual([
      pay('2019091622001458860515315453', 'service_1568601259302', '2019-09-16 10:55:23'),
      refund(
        '2019091622001458860515315453',
        'service_1568601259302',
        're_test_1568602607356',
        '2019-09-16 10:56:48',
      ),
      pay('2019091622001458860513822558', 'service_1568603173853', '2019-09-16 11:07:09'),
      refund(
        '2019091622001458860513822558',
        'service_1568603173853',
        're_test_1568604414433',
        '2019-09-16 11:26:55',
      ),
      pay('2019091622001458860516395930', 'service_1568613406000', '2019-09-16 13:57:52'),
      refund(
        '2019091622001458860516395930',
        'service_1568613406000',
        're_test_1568614511552',
        '2019-09-16 14:15:12',
      ),
      pay('2019091622001458860516993488', 'qd_201909161455139634Sjad2vy', '2019-09-16 14:57:19'),
      refund(
        '2019091622001458860516993488',
        'qd_201909161455139634Sjad2vy',
        're_20190916150216125q8Lmiodp',
        '2019-09-16 15:00:38',
      ),
      pay('2019091622001465870515233238', '20190916165659224L3VUQRL9', '2019-09-16 16:58:58'),
      pay('2019091622001458860517860493', 'qd_201909161844073417CB0wPzR', '2019-09-16 18:43:34'),
    ]);
  });
});

// ---- generated statements ----

/** What a generated line says, as Alipay would write it. */
interface Line {
  row: StatementRow;
  subject: string;
  /** How the fee is written: two decimals when it is whole fen, else five. */
  feeText: string;
}

function yuanText(units: number, decimals: number): string {
  const sign = units < 0 ? '-' : '';
  const digits = String(Math.abs(units)).padStart(decimals + 1, '0');
  return `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function beijing(date: Date): string {
  return new Date(date.getTime() + 8 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
}

function detailLine({ row, subject, feeText }: Line): string {
  const cells: Record<string, string> = {
    支付宝交易号: `${row.channelNo ?? ''}\t`,
    商户订单号: `${row.tradeNo}\t`,
    业务类型: `${row.kind === 'payment' ? '交易' : '退款'}\t`,
    商品名称: csvCell(subject),
    创建时间: beijing(row.time),
    完成时间: beijing(row.time),
    对方账户: '*茶(138****0000)\t',
    '订单金额（元）': yuanText(row.kind === 'refund' ? -row.amount : row.amount, 2),
    '商家实收（元）': yuanText(row.kind === 'refund' ? -row.amount : row.amount, 2),
    '商家红包消费金额（元）': '0.00\t',
    '退款批次号/请求号': `${row.refundNo ?? ''}\t`,
    '服务费（元）': feeText,
  };
  return TRADE_STATEMENT_COLUMNS.map((name) => cells[name] ?? (name.endsWith('（元）') ? '0.00' : '\t')).join(
    ',',
  );
}

function detailFile(lines: Line[], columns: readonly string[] = TRADE_STATEMENT_COLUMNS): string {
  return [
    '#支付宝业务明细查询',
    '#账号：[20881234567890120156]',
    '#起始日期：[2026年01月01日 00:00:00]   终止日期：[2026年01月02日 00:00:00]',
    START,
    columns.join(','),
    ...lines.map(detailLine),
    END,
    '#交易合计：0笔，商家实收共0.00元，商家优惠共0.00元',
    '#导出时间：[2026年01月02日 05:46:49]',
    '',
  ].join('\r\n');
}

const id = fc.stringMatching(/^[A-Za-z0-9_]{1,32}$/);
/** Subjects with what a CSV reader must keep inside a value: commas, quotes, tabs, line breaks. */
const subject = fc
  .array(fc.constantFrom('茶', '叶', 'a', 'Z', '7', ',', '"', '\t', ' ', '，', '#', '\r\n'), {
    maxLength: 24,
  })
  .map((chars) => chars.join(''));
const line: fc.Arbitrary<Line> = fc
  .record({
    kind: fc.constantFrom('payment' as const, 'refund' as const),
    tradeNo: id,
    refundNo: id,
    channelNo: fc.stringMatching(/^\d{28}$/),
    amount: fc.integer({ min: 0, max: 10_000_000_000 }),
    fee: fc.integer({ min: -10_000_000, max: 10_000_000 }),
    fiveDecimals: fc.boolean(),
    time: fc
      .integer({ min: Date.UTC(2016, 0, 1), max: Date.UTC(2030, 0, 1) })
      .map((ms) => new Date(ms - (ms % 1000))),
    subject,
  })
  .map(({ kind, tradeNo, refundNo, channelNo, amount, fee, fiveDecimals, time, subject: text }) => {
    // A fee stated to the fen is written with two decimals, as Alipay writes most of them.
    const fen = fiveDecimals ? fee : fee - (fee % 1000);
    return {
      row: {
        kind,
        tradeNo,
        refundNo: kind === 'refund' ? refundNo : null,
        channelNo,
        amount,
        fee: fen === 0 ? 0 : fen,
        status: 'success',
        time,
      },
      subject: text,
      feeText: fiveDecimals ? yuanText(fen, 5) : yuanText(fen / 1000, 2),
    };
  });

describe('generated statements', () => {
  test('when a statement holds any lines in any order, then every line comes back as written, in the same order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 30 }), async (lines) => {
        const rows = await rowsOf(await statementZip(detailFile(lines)));
        expect(rows).toEqual(lines.map((l) => l.row));
      }),
      { numRuns: 60 },
    );
  });

  test('when the columns come in another order and with extra ones, then they are still read by name', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 10 }),
        fc.shuffledSubarray([...TRADE_STATEMENT_COLUMNS], { minLength: TRADE_STATEMENT_COLUMNS.length }),
        async (lines, columns) => {
          // The lines are written in Alipay's order; reorder each line's cells to the header's.
          const index = columns.map((name) => TRADE_STATEMENT_COLUMNS.indexOf(name as never));
          const text = detailFile([], [...columns, '新列（元）'])
            .split('\r\n')
            .flatMap((l) =>
              l.startsWith(END) ? [...lines.map((x) => reorder(detailLine(x), index)), l] : [l],
            )
            .join('\r\n');
          expect(await rowsOf(await statementZip(text))).toEqual(lines.map((l) => l.row));
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('the CSV under the statement', () => {
  test('when records are written with quoting and read in pieces split anywhere, then every field comes back as written', () => {
    const field = fc
      .array(fc.constantFrom('a', '茶', ' ', '\t', ',', '"', '\r\n', '\n', '#'), { maxLength: 8 })
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(
        fc.array(fc.array(field, { minLength: 2, maxLength: 5 }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom('\r\n', '\n'),
        fc.array(fc.nat(), { maxLength: 10 }),
        (records, eol, cuts) => {
          const text = records.map((r) => r.map(csvCell).join(',')).join(eol) + eol;
          const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const csv = new CsvRecords();
          const read: string[][] = [];
          let from = 0;
          for (const to of [...at, text.length]) {
            read.push(...csv.push(text.slice(from, to)));
            from = to;
          }
          read.push(...csv.end());
          expect(read).toEqual(records);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('when a quote stands inside an unquoted value, then it is kept as it is', () => {
    const csv = new CsvRecords();
    expect([...csv.push('a"b,"c""d"e\r\nx'), ...csv.end()]).toEqual([['a"b', 'c"de'], ['x']]);
  });

  test('when the text ends inside a quoted value, then it is taken as cut short', () => {
    const csv = new CsvRecords();
    csv.push('a,"b,c');
    expect(() => csv.end()).toThrow(
      expect.objectContaining({ name: 'ChannelError', kind: 'invalid_response' }),
    );
  });
});

/** A written line's cells in another order (the cells' own commas are quoted, so a CSV split is safe). */
function reorder(text: string, index: number[]): string {
  const cells: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) {
      cells.push(current);
      current = '';
    } else current += ch;
  }
  cells.push(current);
  return [...index.map((i) => cells[i]!), '1.00'].join(',');
}

describe('files that are not a statement', () => {
  const one: Line = {
    row: {
      kind: 'payment',
      tradeNo: 'T1',
      refundNo: null,
      channelNo: '2026010122001400000000000001',
      amount: 100,
      fee: 1_000,
      status: 'success',
      time: at('2026-01-01 10:00:00'),
    },
    subject: 'tea',
    feeText: '0.01',
  };

  test('when the zip is cut short, then reading it fails as an unreadable statement', async () => {
    const whole = readFileSync(FIXTURE_ZIP);
    const path = join(dir, 'cut.zip');
    writeFileSync(path, whole.subarray(0, whole.length - 40));
    await thrown(rowsOf(path));
  });

  test('when the file is not a zip at all, then reading it fails as an unreadable statement', async () => {
    const path = join(dir, 'page.zip');
    writeFileSync(path, gbk('<html><body>下载超时，请重新下载</body></html>'));
    await thrown(rowsOf(path));
  });

  test('when a detail entry is corrupt inside the zip, then reading it fails as an unreadable statement', async () => {
    const path = await statementZip(detailFile([one, one, one]));
    const bytes = readFileSync(path);
    // Flip bytes in the middle of the last entry's deflated data.
    const at2 = bytes.lastIndexOf(Buffer.from('PK\x07\x08', 'latin1')) - 20;
    for (let i = at2; i < at2 + 8; i++) bytes[i] = bytes[i]! ^ 0xff;
    writeFileSync(path, bytes);
    await thrown(rowsOf(path));
  });

  test('when the zip has only the summary, then reading it names what it has instead', async () => {
    const path = join(dir, 'summary-only.zip');
    writeFileSync(
      path,
      await zipBuffer([{ name: gbk('2088_20260101_业务明细(汇总).csv'), content: [gbk('#x\r\n')] }]),
    );
    await expect(rowsOf(path)).rejects.toThrow(
      /no 业务明细\.csv entry \(it has 2088_20260101_业务明细\(汇总\)\.csv\)/,
    );
  });

  test('when the detail file ends before its end marker, then it is taken as cut short', async () => {
    const text = detailFile([one]);
    await expect(rowsOf(await statementZip(text.slice(0, text.indexOf(END))))).rejects.toThrow(
      /业务明细列表结束/,
    );
  });

  test('when the detail file has no start marker, then it is not read as a statement', async () => {
    const bare = detailFile([one]).replace(`${START}\r\n`, '').replace(`${END}\r\n`, '');
    await expect(rowsOf(await statementZip(bare))).rejects.toThrow(/no 业务明细列表 marker line/);
    await thrown(rowsOf(await statementZip(detailFile([one]).replace(START, '#'))));
  });

  test('when a line has an unknown 业务类型 or an unreadable amount, then reading fails naming the line', async () => {
    await expect(rowsOf(await statementZip(detailFile([one]).replace('交易\t', '充值\t')))).rejects.toThrow(
      /业务类型 "充值".*\(line 6\)/,
    );
    await expect(
      rowsOf(await statementZip(detailFile([one]).replace(',1.00,1.00,', ',1.0.0,1.00,'))),
    ).rejects.toThrow(/订单金额/);
  });

  test('when the port is handed a file of another format, then it refuses to read it', async () => {
    const port = alipayStatements({ options: { timeoutMs: 1 } } as never);
    expect(() =>
      port.parse(FIXTURE_ZIP, {
        status: 'ready',
        format: 'wechatpay-tradebill-gzip',
        size: 1,
        channelHash: null,
      }),
    ).toThrow(expect.objectContaining({ name: 'ChannelError', kind: 'invalid_response' }));
    expect(ALIPAY_TRADE_STATEMENT_FORMAT).toBe('alipay-trade-zip');
  });
});

describe('a million lines', () => {
  test('when a statement holds a million detail lines, then they are read in flat memory', async () => {
    const count = 1_000_000;
    const path = join(dir, 'million.zip');
    const header = detailFile([]).split(END)[0]!;
    const template: Line = {
      row: {
        kind: 'payment',
        tradeNo: 'T',
        refundNo: null,
        channelNo: '2026010122001400000000000001',
        amount: 12_345,
        fee: 74_000,
        status: 'success',
        time: at('2026-01-01 10:00:00'),
      },
      subject: '茶叶, 绿茶 "特级"',
      feeText: '0.74',
    };
    async function* content() {
      yield gbk(header);
      let batch: string[] = [];
      for (let i = 0; i < count; i++) {
        batch.push(detailLine({ ...template, row: { ...template.row, tradeNo: `T${i}` } }));
        if (batch.length === 5_000) {
          yield gbk(`${batch.join('\r\n')}\r\n`);
          batch = [];
        }
      }
      yield gbk(`${END}\r\n`);
    }
    await pipeline(
      Readable.from(zipChunks([{ name: gbk('2088_20260101_业务明细.csv'), content: content() }])),
      createWriteStream(path),
    );
    const before = liveHeapBytes();
    let peak = before;
    let rows = 0;
    let amount = 0;
    for await (const row of readTradeStatement(path)) {
      rows++;
      amount += row.amount;
      if (rows % 250_000 === 0) peak = Math.max(peak, liveHeapBytes());
    }
    expect(rows).toBe(count);
    expect(amount).toBe(count * 12_345);
    // The detail file is about 200 MB of text; once garbage is collected, reading it holds a few
    // buffers (about 0.4 MiB here), never the file.
    expect(peak - before).toBeLessThan(16 * 1024 * 1024);
  }, 180_000);
});
