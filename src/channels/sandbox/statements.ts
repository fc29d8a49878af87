/**
 * The sandbox's statements port: a day's statement in WeChat Pay's tradebill format (gzip of the
 * ALL CSV, its SHA-1 published beside it), read with the WeChat Pay reader, so that
 * reconciliation rehearses on the sandbox what it does with a real channel.
 */
import { ChannelError } from '../errors';
import type { StatementsPort } from '../ports';
import { TRADEBILL_GZIP_FORMAT, readTradebillFile } from '../wechatpay/statement-file';
import type { SandboxClient } from './client';
import { parseErrorBody } from './transformers';

/** The header the simulator publishes the SHA-1 of the decompressed statement in. */
export const SANDBOX_STATEMENT_SHA1_HEADER = 'sandbox-statement-sha1';

export function sandboxStatements(client: SandboxClient): StatementsPort {
  return {
    fetch: async (ctx, day, path) => {
      const query = ctx.subMerchantNo ? `?sub_merchant_no=${encodeURIComponent(ctx.subMerchantNo)}` : '';
      const answer = await client.download(`/v1/statements/${encodeURIComponent(day)}${query}`, path);
      if ('size' in answer) {
        const sha1 = answer.headers[SANDBOX_STATEMENT_SHA1_HEADER];
        // A statement whose hash did not come with it cannot be checked: it is not taken.
        if (typeof sha1 !== 'string' || !/^[0-9a-f]{40}$/i.test(sha1)) {
          throw new ChannelError(
            'invalid_response',
            `sandbox sent the statement without a valid ${SANDBOX_STATEMENT_SHA1_HEADER}`,
          );
        }
        return {
          status: 'ready',
          format: TRADEBILL_GZIP_FORMAT,
          size: answer.size,
          channelHash: `SHA1:${sha1}`,
        };
      }
      if (client.isUnknown(answer, 'statement_empty')) return { status: 'empty' };
      const { code, error } = parseErrorBody(answer.status, answer.text);
      if (answer.status === 409 && code === 'statement_not_ready')
        return { status: 'not_ready', reason: error };
      client.ok('fetch statement', answer);
      throw new ChannelError('invalid_response', `sandbox answered the statement with HTTP ${answer.status}`);
    },
    parse: (path, file) => readTradebillFile(path, file.format, file.channelHash, 'sandbox'),
  };
}
