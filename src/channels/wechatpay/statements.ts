/**
 * WeChat Pay's statements port: a sub-merchant's trade statement of a day (申请交易账单,
 * `bill_type=ALL`, gzip), downloaded from the link it answers to a file, and read back as rows
 * (statement-file.ts, statement-format.ts).
 */
import { ChannelError } from '../errors';
import type { StatementsPort } from '../ports';
import type { WechatpayClient } from './client';
import { TRADEBILL_GZIP_FORMAT, readTradebillFile } from './statement-file';

/**
 * A link lives about five minutes (30 s for some bills): one that was refused by the time it was
 * used is asked for again, this many times more.
 */
const RELINKS = 2;

interface WireTradebill {
  hash_type?: unknown;
  hash_value?: unknown;
  download_url?: unknown;
}

function parseTradebill(answer: unknown): { hash: string; link: string } {
  const wire = (typeof answer === 'object' && answer !== null ? answer : {}) as WireTradebill;
  if (
    wire.hash_type !== 'SHA1' ||
    typeof wire.hash_value !== 'string' ||
    !/^[0-9a-fA-F]{40}$/.test(wire.hash_value)
  ) {
    throw new ChannelError('invalid_response', 'WeChat Pay statement answer without a SHA1 hash_value');
  }
  if (typeof wire.download_url !== 'string' || wire.download_url === '') {
    throw new ChannelError('invalid_response', 'WeChat Pay statement answer without download_url');
  }
  return { hash: wire.hash_value.toLowerCase(), link: wire.download_url };
}

export function wechatpayStatements(client: WechatpayClient): StatementsPort {
  return {
    fetch: async (ctx, day, path) => {
      const params = { bill_date: day, sub_mchid: client.subMchid(ctx), bill_type: 'ALL', tar_type: 'GZIP' };
      for (let attempt = 0; ; attempt++) {
        let bill: { hash: string; link: string };
        try {
          bill = parseTradebill(
            await client.call('ask for the trade statement', 'GET', 'v3/bill/tradebill', undefined, {
              params,
            }),
          );
        } catch (err) {
          if (err instanceof ChannelError && err.kind === 'refused') {
            if (err.message.startsWith('NO_STATEMENT_EXIST')) return { status: 'empty' };
            if (err.message.startsWith('STATEMENT_CREATING'))
              return { status: 'not_ready', reason: err.message };
          }
          throw err;
        }
        try {
          const size = await client.download('download the trade statement', bill.link, path);
          return { status: 'ready', format: TRADEBILL_GZIP_FORMAT, size, channelHash: `SHA1:${bill.hash}` };
        } catch (err) {
          // A refused download is a link that expired (or was used up) before it was used.
          if (!(err instanceof ChannelError && err.kind === 'refused') || attempt >= RELINKS) throw err;
        }
      }
    },
    parse: (path, file) => readTradebillFile(path, file.format, file.channelHash),
  };
}
