import fs from 'node:fs';
import { SingleBar } from 'cli-progress';
import { parse } from 'csv-parse/sync';
import { APP_ID_PATTERN } from '../../modules/apps';
import {
  ACCOUNT_KINDS,
  ChannelAccountRepository,
  MerchantRepository,
  NoSuchMerchantError,
  attachAccount,
  attachSchema,
  claimOf,
} from '../../modules/merchants';
import { channelsFromConfig } from '../../channels/registry';
import { resolveMasterKey } from '../../platform/crypto/master-key';
import { resolvePayloadKeys } from '../../platform/crypto/keyring';
import { AppError } from '../../platform/errors';
import { validate } from '../../platform/http/validation';
import { boot } from '../boot';
import { fail } from '../config';
import { withDatabase } from '../database';

/** One account to attach: a CSV row (its line number) or the command line's. */
interface AttachRow {
  line: number;
  merchantId: string;
  channelCode: string;
  fields: Record<string, string>;
}

/** The CSV's columns: merchant_id, channel_code, and the account fields of any channel. */
const FIELD_COLUMNS = [...new Set(Object.values(ACCOUNT_KINDS).flat())];

/**
 * The rows of an import file: a header line naming merchant_id, channel_code and the account
 * fields (any order, empty cells ignored). A file that cannot be read as such ends the command.
 */
export function readAttachCsv(text: string): AttachRow[] {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // With `info`, each record comes with where it was read.
    records = parse(text, {
      bom: true,
      skip_empty_lines: true,
      trim: true,
      relax_column_count: false,
      info: true,
    }) as unknown as { record: string[]; info: { lines: number } }[];
  } catch (err) {
    return fail(`the CSV cannot be read: ${(err as Error).message}`);
  }
  const header = records[0]?.record;
  const rows = records.slice(1);
  if (!header) return fail('the CSV is empty: its first line must name the columns');
  for (const required of ['merchant_id', 'channel_code']) {
    if (!header.includes(required)) fail(`the CSV's header has no ${required} column`);
  }
  const unknown = header.filter(
    (h) => h !== 'merchant_id' && h !== 'channel_code' && !FIELD_COLUMNS.includes(h),
  );
  if (unknown.length > 0) {
    fail(
      `the CSV's header has unknown columns: ${unknown.join(', ')} (known: merchant_id, channel_code, ${FIELD_COLUMNS.join(', ')})`,
    );
  }
  return rows.map(({ record: cells, info }) => {
    const value = (name: string) => cells[header.indexOf(name)] ?? '';
    const fields: Record<string, string> = {};
    for (const f of FIELD_COLUMNS) if (header.includes(f) && value(f) !== '') fields[f] = value(f);
    // The file's line the row ends on, blank lines and multi-line cells counted.
    return { line: info.lines, merchantId: value('merchant_id'), channelCode: value('channel_code'), fields };
  });
}

/** `field=value` arguments of a single attach. */
function fieldsOf(pairs: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) fail(`"${pair}" is not field=value (e.g. sub_mchid=1900000109)`);
    fields[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return fields;
}

interface Outcome {
  line: number;
  merchant_id: string;
  channel_code: string;
  /** `failed`: the channel did not answer; nothing was saved, and the row may be sent again. */
  result: 'attached' | 'unchanged' | 'refused' | 'failed';
  reason?: string;
}

/**
 * `durapay merchants attach`: attaches merchants' existing channel accounts, each confirmed by
 * its channel first exactly as `PUT …/channel-accounts/{channel_code}` does (SPEC §5.8), from the
 * command line or from a CSV, several at once, with a progress bar and a summary of the refused
 * rows. Exits 1 when any row was refused (the others are attached).
 */
export async function attach(
  args: string[],
  opts: { app: string; csv?: string; concurrency: string; json?: boolean },
): Promise<void> {
  if (!APP_ID_PATTERN.test(opts.app))
    fail(`"${opts.app}" is not an app id (app_ + 16 lowercase base32 characters)`);
  const concurrency = Number(opts.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32)
    fail('--concurrency must be 1 to 32');
  let rows: AttachRow[];
  if (opts.csv !== undefined) {
    if (args.length > 0)
      fail('give either --csv <file> or <merchant_id> <channel_code> field=value…, not both');
    let text: string;
    try {
      text = fs.readFileSync(opts.csv === '-' ? 0 : opts.csv, 'utf8');
    } catch (err) {
      return fail(`cannot read ${opts.csv}: ${(err as Error).message}`);
    }
    rows = readAttachCsv(text);
  } else {
    const [merchantId, channelCode, ...pairs] = args;
    if (!merchantId || !channelCode) fail('give <merchant_id> <channel_code> field=value…, or --csv <file>');
    rows = [{ line: 0, merchantId, channelCode, fields: fieldsOf(pairs) }];
  }

  const { config, logger } = boot('cli');
  let keyring;
  try {
    keyring = resolvePayloadKeys(config);
  } catch (err) {
    return fail(err);
  }
  const channels = channelsFromConfig(config, resolveMasterKey(config));
  const outcomes: Outcome[] = await withDatabase(config, logger, async (db) => {
    const accounts = new ChannelAccountRepository(db, keyring);
    const bar = new SingleBar({
      format: 'attaching [{bar}] {value}/{total} · {refused} refused',
      stream: process.stderr,
      noTTYOutput: true,
      notTTYSchedule: 2000,
      hideCursor: true,
    });
    const results: Outcome[] = [];
    bar.start(rows.length, 0, { refused: 0 });
    const merchants = new MerchantRepository(db);
    // A merchant and channel named twice would race, the last one winning: each later row is refused.
    const firstLine = new Map<string, number>();
    for (const row of rows) {
      const key = `${row.merchantId}\u0000${row.channelCode}`;
      if (!firstLine.has(key)) firstLine.set(key, row.line);
    }
    const one = async (row: AttachRow): Promise<Outcome> => {
      const base = { line: row.line, merchant_id: row.merchantId, channel_code: row.channelCode };
      const first = firstLine.get(`${row.merchantId}\u0000${row.channelCode}`)!;
      if (first !== row.line) {
        return {
          ...base,
          result: 'refused',
          reason: `line ${first} already names this merchant at this channel`,
        };
      }
      try {
        if (!(await merchants.find(opts.app, row.merchantId))) {
          return { ...base, result: 'refused', reason: 'merchant not found' };
        }
        if (!Object.hasOwn(ACCOUNT_KINDS, row.channelCode)) {
          throw new AppError(
            'invalid_param',
            `channel_code must be one of ${Object.keys(ACCOUNT_KINDS).join(', ')}`,
          );
        }
        const claim = claimOf(
          row.channelCode,
          validate(attachSchema(row.channelCode), row.fields) as Record<string, string>,
        );
        const { changed } = await attachAccount(
          { channels, accounts },
          {
            appId: opts.app,
            merchantId: row.merchantId,
            channelCode: row.channelCode,
            claim,
            source: 'attached',
          },
        );
        return { ...base, result: changed ? 'attached' : 'unchanged' };
      } catch (err) {
        if (err instanceof AppError && err.code === 'channel_timeout') {
          return { ...base, result: 'failed', reason: err.message };
        }
        if (err instanceof AppError) return { ...base, result: 'refused', reason: err.message };
        if (err instanceof NoSuchMerchantError)
          return { ...base, result: 'refused', reason: 'merchant not found' };
        logger.error('attach failed', {
          line: row.line,
          error: err instanceof Error ? err.message : String(err),
        });
        return { ...base, result: 'refused', reason: 'the database refused it (see the log)' };
      }
    };
    let next = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, rows.length) }, async () => {
        while (next < rows.length) {
          const row = rows[next++]!;
          const outcome = await one(row);
          results.push(outcome);
          if (outcome.result === 'refused' || outcome.result === 'failed') refused += 1;
          bar.increment(1, { refused });
        }
      }),
    );
    bar.stop();
    return results.sort((a, b) => a.line - b.line);
  }).catch(fail);

  if (opts.json) for (const o of outcomes) process.stdout.write(`${JSON.stringify(o)}\n`);
  const count = (r: Outcome['result']) => outcomes.filter((o) => o.result === r).length;
  const notAttached = outcomes.filter((o) => o.result === 'refused' || o.result === 'failed');
  console.error(
    `${count('attached')} attached, ${count('unchanged')} already attached, ${count('refused')} refused, ` +
      `${count('failed')} not confirmed: the channel did not answer (of ${outcomes.length})`,
  );
  for (const o of notAttached) {
    const where = o.line > 0 ? `line ${o.line}: ` : '';
    const again = o.result === 'failed' ? ' (send it again)' : '';
    console.error(`  ${where}${o.merchant_id} at ${o.channel_code}: ${o.reason}${again}`);
  }
  if (notAttached.length > 0) process.exitCode = 1;
}
