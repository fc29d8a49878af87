/**
 * Alipay's statements port: the day's trade statement (alipay.data.dataservice.bill.downloadurl.query)
 * downloaded to a file and read from it, streamed both ways: a statement may hold a million lines.
 *
 * The link Alipay answers works for about 30 seconds, so it is used at once, and asked for again
 * when it expired anyway. The file is a zip of GBK CSV files whose entry names are GBK too, without
 * the zip's UTF-8 flag; the detail file is picked by its name (statement-format.ts reads it).
 */
import { createWriteStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import iconv from 'iconv-lite';
import { request } from 'undici';
import yauzl from 'yauzl';
import { ChannelError } from '../errors';
import type { ChannelContext, StatementFile, StatementRow, StatementsPort } from '../ports';
import type { AlipayClient } from './client';
import {
  ALIPAY_TRADE_STATEMENT_FORMAT,
  CsvRecords,
  TradeStatementReader,
  isDetailEntryName,
} from './statement-format';

export const BILL_METHOD = 'alipay.data.dataservice.bill.downloadurl.query';

/** Alipay's answer for a day it has no statement of: nothing happened, or not generated yet. */
const BILL_NOT_EXIST = 'isp.bill_not_exist';

/**
 * Until when (Beijing time, the day after) a missing statement is taken as not generated yet
 * rather than as a day without trades. Alipay generates a day's statement by about 09:00 the day
 * after (later on some days) and answers the same isp.bill_not_exist in both cases; 11:00 leaves
 * room for a late one and still answers `empty` before reconciliation stops asking at noon.
 */
export const STATEMENT_READY_BY_HOUR = 11;

/** How many links one fetch asks for: the first, and two more when a link expired unused. */
const LINK_ATTEMPTS = 3;
const BEIJING_OFFSET_MS = 8 * 3_600_000;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A zip starts with a local file header, or is empty (only its end record). */
const ZIP_MAGIC = [Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('PK\x05\x06', 'latin1')];

export interface AlipayStatementsOptions {
  /** The clock that decides whether a missing statement is late or empty (epoch ms). */
  now?: () => number;
  /** How long the download may wait for headers, and between two chunks of the body. */
  downloadTimeoutMs?: number;
}

/** The moment after which a missing statement of `day` means a day without trades. */
export function statementReadyBy(day: string): number {
  const m = DAY.exec(day)!;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]! + 1, STATEMENT_READY_BY_HOUR) - BEIJING_OFFSET_MS;
}

export function alipayStatements(
  client: AlipayClient,
  options: AlipayStatementsOptions = {},
): StatementsPort {
  const now = options.now ?? Date.now;
  const timeoutMs = options.downloadTimeoutMs ?? client.options.timeoutMs;

  /** The day's download link, or what Alipay's refusal means for the statement. */
  async function askLink(ctx: ChannelContext, day: string): Promise<string | StatementFile> {
    const smid = client.smidOf(ctx);
    // A 直付通 secondary merchant's statement is its own bill type, named by its smid.
    const bizContent = smid
      ? { bill_type: 'trade_zft_merchant', bill_date: day, smid }
      : { bill_type: 'trade', bill_date: day };
    try {
      const answer = await client.call('ask for a statement', BILL_METHOD, {
        bizContent,
        ...client.authOf(ctx),
      });
      return client.field(answer, 'bill_download_url', 'the statement query');
    } catch (err) {
      if (!(err instanceof ChannelError && err.message.startsWith(`${BILL_NOT_EXIST}:`))) throw err;
      if (now() < statementReadyBy(day)) {
        return { status: 'not_ready', reason: `Alipay has no statement of ${day} yet (${BILL_NOT_EXIST})` };
      }
      return { status: 'empty' };
    }
  }

  /** Downloads a link to `path`; false when what came back is not a zip (an expired link's page). */
  async function download(url: string, path: string): Promise<boolean> {
    try {
      const answer = await request(url, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      if (answer.statusCode !== 200) {
        answer.body.resume();
        throw new ChannelError(
          'unreachable',
          `Alipay's statement download answered HTTP ${answer.statusCode}`,
        );
      }
      await pipeline(answer.body, createWriteStream(path));
    } catch (err) {
      if (err instanceof ChannelError) throw err;
      const why = err instanceof Error ? err.message : String(err);
      throw new ChannelError('unreachable', `Alipay's statement could not be downloaded: ${why}`);
    }
    return startsLikeZip(path);
  }

  return {
    async fetch(ctx, day, path) {
      if (!DAY.test(day) || Number.isNaN(statementReadyBy(day))) {
        throw new ChannelError('refused', `a statement day is YYYY-MM-DD, not ${JSON.stringify(day)}`);
      }
      for (let attempt = 1; attempt <= LINK_ATTEMPTS; attempt++) {
        const link = await askLink(ctx, day);
        if (typeof link !== 'string') return link;
        if (await download(link, path)) {
          const { size } = await stat(path);
          return { status: 'ready', format: ALIPAY_TRADE_STATEMENT_FORMAT, size, channelHash: null };
        }
      }
      await rm(path, { force: true });
      throw new ChannelError(
        'unreachable',
        `Alipay's statement links of ${day} expired before they could be used, ${LINK_ATTEMPTS} times`,
      );
    },

    parse(path, file) {
      if (file.format !== ALIPAY_TRADE_STATEMENT_FORMAT) {
        throw new ChannelError('invalid_response', `an Alipay statement is not a ${file.format} file`);
      }
      return readTradeStatement(path);
    },
  };
}

async function startsLikeZip(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return bytesRead === 4 && ZIP_MAGIC.some((magic) => magic.equals(head));
  } finally {
    await handle.close();
  }
}

function unreadable(err: unknown): ChannelError {
  if (err instanceof ChannelError) return err;
  const why = err instanceof Error ? err.message : String(err);
  return new ChannelError(
    'invalid_response',
    `the Alipay statement is not a readable zip of CSV files: ${why}`,
  );
}

/** An entry's name: UTF-8 when the zip says so, else GBK, as Alipay writes them. */
function entryName(entry: yauzl.Entry): string {
  const utf8 = (entry.generalPurposeBitFlag & 0x800) !== 0;
  return iconv.decode(entry.fileNameRaw, utf8 ? 'utf8' : 'gbk');
}

/** The next entry of a zip opened with lazyEntries, or undefined after the last one. */
function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry) => {
      cleanup();
      resolve(entry);
    };
    const onEnd = () => {
      cleanup();
      resolve(undefined);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/** The detail lines of a trade statement zip, decoded and read as they stream out of it. */
export async function* readTradeStatement(path: string): AsyncGenerator<StatementRow> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, decodeStrings: false, autoClose: false });
  } catch (err) {
    throw unreadable(err);
  }
  try {
    let detail: yauzl.Entry | undefined;
    const names: string[] = [];
    try {
      for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
        const name = entryName(entry);
        names.push(name);
        if (isDetailEntryName(name)) {
          detail = entry;
          break;
        }
      }
    } catch (err) {
      throw unreadable(err);
    }
    if (!detail) {
      throw new ChannelError(
        'invalid_response',
        `the Alipay statement has no 业务明细.csv entry (it has ${names.length === 0 ? 'none' : names.join(', ')})`,
      );
    }
    let entryStream: Readable;
    try {
      entryStream = await zip.openReadStreamPromise(detail);
    } catch (err) {
      throw unreadable(err);
    }
    const text = entryStream.pipe(iconv.decodeStream('gbk')) as Transform;
    // A broken entry (bad CRC, truncated data) fails the text read from it.
    entryStream.on('error', (err) => text.destroy(unreadable(err)));
    const csv = new CsvRecords();
    const reader = new TradeStatementReader();
    try {
      for await (const chunk of text as AsyncIterable<string>) {
        for (const record of csv.push(chunk)) {
          const row = reader.push(record);
          if (row) yield row;
        }
      }
      for (const record of csv.end()) {
        const row = reader.push(record);
        if (row) yield row;
      }
    } catch (err) {
      throw unreadable(err);
    } finally {
      entryStream.destroy();
    }
    reader.end();
  } finally {
    zip.close();
  }
}
