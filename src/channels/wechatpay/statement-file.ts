/**
 * A WeChat Pay trade statement as fetched (gzip of the CSV whose SHA-1 WeChat Pay publishes), read
 * as a stream of rows: decompressed, hashed and split into lines chunk by chunk, so that a file of
 * a million lines never sits in memory. The sandbox channel serves the same format and reads it
 * with the same function.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { ChannelError } from '../errors';
import type { StatementRow } from '../ports';
import { TradebillReader } from './statement-format';

/** The format name `fetch` reports and `parse` reads. */
export const TRADEBILL_GZIP_FORMAT = 'wechatpay-tradebill-gzip';

/** `SHA1:<hex>` → the lower-case hex; anything else is not a hash this reader can check. */
function sha1Of(channelHash: string | null, who: string): string | null {
  if (channelHash === null) return null;
  const match = /^SHA1:([0-9a-fA-F]{40})$/.exec(channelHash);
  if (!match)
    throw new ChannelError('invalid_response', `${who} statement hash "${channelHash}" is not SHA1:<hex>`);
  return match[1]!.toLowerCase();
}

/**
 * The rows of the gzip statement at `path`. The SHA-1 of the decompressed bytes is compared with
 * `channelHash` once the last line was read: a difference, like a file that does not decompress,
 * throws ChannelError('invalid_response'), since the file is not the one the channel published.
 */
export async function* readTradebillFile(
  path: string,
  format: string,
  channelHash: string | null,
  who = 'WeChat Pay',
): AsyncGenerator<StatementRow> {
  if (format !== TRADEBILL_GZIP_FORMAT) {
    throw new ChannelError(
      'invalid_response',
      `${who} statement format ${format} is not ${TRADEBILL_GZIP_FORMAT}`,
    );
  }
  const expected = sha1Of(channelHash, who);
  const hash = createHash('sha1');
  const reader = new TradebillReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const source = createReadStream(path);
  const gunzip = createGunzip();
  // A read error (a missing file) reaches the loop below through the gunzip stream.
  source.on('error', (err) => gunzip.destroy(err));
  source.pipe(gunzip);
  let rest = '';
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      hash.update(chunk);
      const text = rest + decoder.decode(chunk, { stream: true });
      const lines = text.split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const row = reader.line(line.endsWith('\r') ? line.slice(0, -1) : line);
        if (row) yield row;
      }
    }
    rest += decoder.decode();
  } catch (err) {
    if (err instanceof ChannelError) throw err;
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'EACCES') throw err;
    throw new ChannelError(
      'invalid_response',
      `${who} statement is not a gzip of UTF-8 text: ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    source.destroy();
    gunzip.destroy();
  }
  const last = reader.line(rest.endsWith('\r') ? rest.slice(0, -1) : rest);
  if (last) yield last;
  if (!reader.started)
    throw new ChannelError('invalid_response', `${who} statement is empty: no header line`);
  const actual = hash.digest('hex');
  if (expected !== null && actual !== expected) {
    throw new ChannelError(
      'invalid_response',
      `${who} statement's SHA-1 is ${actual}, not the published ${expected}: the file is not the one published`,
    );
  }
}
