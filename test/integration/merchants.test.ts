import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import os from 'node:os';
import { QueryTypes } from 'sequelize';
import { UPLOAD_TEMP_PREFIX } from '../../src/platform/http/multipart';
import { MAX_UPLOAD_BYTES } from '../../src/modules/merchants/rules';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { signRequest } from '../../src/platform/crypto/http-signature';
import { FieldSealer } from '../../src/platform/crypto/field-sealer';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope, type Envelope } from '../support/http';
import { multipart, type Part } from '../support/multipart';
import { signedFetch } from '../support/signing';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let other: AppCredentials;

beforeAll(async () => {
  stack = await startTestStack();
  app = await stack.createApp(['merchants']);
  other = await stack.createApp(['merchants'], 'other');
});
afterAll(async () => {
  await stack?.stop();
});

interface MerchantRecord {
  merchant_id: string;
  merchant_name: string;
  license_no: string | null;
  legal_person: string | null;
  bank_account: string | null;
  status: string;
  channel_code: string | null;
  sub_merchant_no: string | null;
  profit_sharing: { receivers: Record<string, unknown>[]; max_ratio: number } | null;
  channel_accounts: Record<string, unknown>[];
  created_at: string;
  updated_at: string;
}

interface Page {
  list: MerchantRecord[];
  limit: number;
  offset: number;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const newId = () => `m-${randomUUID()}`;

const post = (json: unknown, creds = app) =>
  signedFetch(stack.baseUrl, creds, 'POST', '/api/v1/merchant', { json });
const get = (target: string, creds = app) => signedFetch(stack.baseUrl, creds, 'GET', target);

async function answer<T = Record<string, unknown>>(res: Response): Promise<{ status: number } & Envelope<T>> {
  return { status: res.status, ...(await envelope<T>(res)) };
}

async function createMerchant(body: Record<string, unknown>, creds = app): Promise<void> {
  const res = await answer(await post({ merchant_name: 'Shop', ...body }, creds));
  expect(res).toMatchObject({ status: 200, code: 'success', data: { merchant_id: body.merchant_id } });
}

async function rows<T extends object>(sql: string, replacements: Record<string, unknown>): Promise<T[]> {
  return stack.database.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

describe('POST /api/v1/merchant', () => {
  test('when a valid merchant is created, then its merchant_id comes back and it is stored as created', async () => {
    const id = newId();
    const res = await answer(
      await post({
        merchant_id: id,
        merchant_name: 'Coffee Corner',
        license_no: 'LIC-1',
        legal_person: 'Li Lei',
        bank_account: '6222020200112233',
      }),
    );
    expect(res).toMatchObject({ status: 200, code: 'success', data: { merchant_id: id } });
    const [row] = await rows<{ status: string; bank_account: string; profit_sharing: unknown }>(
      'SELECT status, bank_account, profit_sharing FROM merchants WHERE app_id = :appId AND merchant_id = :id',
      { appId: app.app_id, id },
    );
    // The bank account is kept whole for onboarding, sealed (applicant-data.test.ts).
    expect(row).toEqual({ status: 'created', bank_account: expect.any(String), profit_sharing: null });
    expect(FieldSealer.isSealed(row!.bank_account)).toBe(true);
    expect(row!.bank_account).not.toContain('6222020200112233');
  });

  test('when profit_sharing has no max_ratio, then 0.30 is stored with the receivers', async () => {
    const id = newId();
    const receivers = [
      { type: 'merchant', account: 'acct-1', name: 'Partner', weight: 3 },
      { type: 'personal', account: 'acct-2', weight: 1 },
    ];
    await createMerchant({ merchant_id: id, profit_sharing: { receivers } });
    const res = await answer<MerchantRecord>(await get(`/api/v1/merchant/${id}`));
    expect(res.data?.profit_sharing).toEqual({ receivers, max_ratio: 0.3 });
  });

  test('when profit_sharing gives max_ratio 1, then it is kept', async () => {
    const id = newId();
    await createMerchant({
      merchant_id: id,
      profit_sharing: { receivers: [{ type: 't', account: 'a', weight: 1 }], max_ratio: 1 },
    });
    const res = await answer<MerchantRecord>(await get(`/api/v1/merchant/${id}`));
    expect(res.data?.profit_sharing?.max_ratio).toBe(1);
  });

  const receiver = { type: 'merchant', account: 'acct', weight: 1 };
  test.each<[string, Record<string, unknown>, RegExp]>([
    ['merchant_id is missing', { merchant_name: 'Shop' }, /"merchant_id" is required/],
    ['merchant_id is empty', { merchant_id: '', merchant_name: 'Shop' }, /"merchant_id"/],
    ['merchant_id has a slash', { merchant_id: 'a/b', merchant_name: 'Shop' }, /"merchant_id" must be 1-64/],
    ['merchant_id has a space', { merchant_id: 'a b', merchant_name: 'Shop' }, /"merchant_id" must be 1-64/],
    ['merchant_id is 65 characters', { merchant_id: 'a'.repeat(65), merchant_name: 'Shop' }, /"merchant_id"/],
    ['merchant_id is a number', { merchant_id: 12, merchant_name: 'Shop' }, /"merchant_id" must be a string/],
    ['merchant_name is missing', { merchant_id: 'x' }, /"merchant_name" is required/],
    ['merchant_name is empty', { merchant_id: 'x', merchant_name: '' }, /"merchant_name"/],
    [
      'merchant_name is 129 characters',
      { merchant_id: 'x', merchant_name: 'n'.repeat(129) },
      /"merchant_name"/,
    ],
    [
      'license_no is 65 characters',
      { merchant_id: 'x', merchant_name: 'S', license_no: 'l'.repeat(65) },
      /"license_no"/,
    ],
    ['legal_person is a number', { merchant_id: 'x', merchant_name: 'S', legal_person: 5 }, /"legal_person"/],
    [
      'bank_account is 65 characters',
      { merchant_id: 'x', merchant_name: 'S', bank_account: '1'.repeat(65) },
      /"bank_account"/,
    ],
    [
      'an unknown field is sent',
      { merchant_id: 'x', merchant_name: 'S', colour: 'red' },
      /"colour" is not allowed/,
    ],
    [
      'profit_sharing has no receivers',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: [] } },
      /"profit_sharing.receivers" must contain at least 1/,
    ],
    [
      'profit_sharing has 51 receivers',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: Array(51).fill(receiver) } },
      /"profit_sharing.receivers" must contain less than or equal to 50/,
    ],
    [
      'a receiver weight is 0',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: [{ ...receiver, weight: 0 }] } },
      /"profit_sharing.receivers\[0\].weight" must be a positive number/,
    ],
    [
      'a receiver weight is 1.5',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: [{ ...receiver, weight: 1.5 }] } },
      /"profit_sharing.receivers\[0\].weight" must be an integer/,
    ],
    [
      'a receiver weight is a string',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: [{ ...receiver, weight: '1' }] } },
      /"profit_sharing.receivers\[0\].weight" must be a number/,
    ],
    [
      'a receiver has no account',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: [{ type: 't', weight: 1 }] } },
      /"profit_sharing.receivers\[0\].account" is required/,
    ],
    [
      'a receiver type is 33 characters',
      {
        merchant_id: 'x',
        merchant_name: 'S',
        profit_sharing: { receivers: [{ ...receiver, type: 't'.repeat(33) }] },
      },
      /"profit_sharing.receivers\[0\].type"/,
    ],
    [
      'max_ratio is 0',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: [receiver], max_ratio: 0 } },
      /"profit_sharing.max_ratio" must be greater than 0/,
    ],
    [
      'max_ratio is 1.01',
      { merchant_id: 'x', merchant_name: 'S', profit_sharing: { receivers: [receiver], max_ratio: 1.01 } },
      /"profit_sharing.max_ratio" must be less than or equal to 1/,
    ],
  ])('when %s, then 400 invalid_param names the field', async (_situation, body, message) => {
    const res = await answer(await post(body));
    expect(res).toMatchObject({ status: 400, code: 'invalid_param', data: null });
    expect(res.message).toMatch(message);
  });

  test('when the body is not JSON, then 400 invalid_param', async () => {
    const res = await answer(
      await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/merchant', { body: '{"merchant_id":' }),
    );
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
  });

  test('when the merchant_id already exists for this app, then 500 database_error "merchant_id already exists"', async () => {
    const id = newId();
    await createMerchant({ merchant_id: id, merchant_name: 'First' });
    const res = await answer(await post({ merchant_id: id, merchant_name: 'Second' }));
    expect(res).toMatchObject({
      status: 500,
      code: 'database_error',
      message: 'merchant_id already exists',
      data: null,
    });
    const [row] = await rows<{ merchant_name: string }>(
      'SELECT merchant_name FROM merchants WHERE app_id = :appId AND merchant_id = :id',
      { appId: app.app_id, id },
    );
    expect(row?.merchant_name).toBe('First');
  });

  test('when another app uses the same merchant_id, then it is created for that app too', async () => {
    const id = newId();
    await createMerchant({ merchant_id: id, merchant_name: 'Mine' });
    await createMerchant({ merchant_id: id, merchant_name: 'Theirs' }, other);
    const mine = await answer<MerchantRecord>(await get(`/api/v1/merchant/${id}`));
    const theirs = await answer<MerchantRecord>(await get(`/api/v1/merchant/${id}`, other));
    expect(mine.data?.merchant_name).toBe('Mine');
    expect(theirs.data?.merchant_name).toBe('Theirs');
  });

  test('when the database refuses the insert, then 500 database_error with a sentence and no SQL', async () => {
    const id = newId();
    await stack.database.db.sequelize.query(
      `ALTER TABLE merchants ADD CONSTRAINT merchants_test_refuse CHECK (merchant_name <> 'refuse-me')`,
    );
    try {
      const res = await answer(await post({ merchant_id: id, merchant_name: 'refuse-me' }));
      expect(res).toMatchObject({ status: 500, code: 'database_error', data: null });
      expect(res.message).toBe('could not create the merchant: the database refused the request');
      expect(res.message).not.toMatch(/merchants_test_refuse|INSERT|constraint/i);
    } finally {
      await stack.database.db.sequelize.query('ALTER TABLE merchants DROP CONSTRAINT merchants_test_refuse');
    }
  });

  test('when an app lacks the merchants scope, then 403 permission_denied', async () => {
    const payments = await stack.createApp(['payments'], 'payments-only');
    const res = await answer(await post({ merchant_id: newId(), merchant_name: 'Shop' }, payments));
    expect(res).toMatchObject({ status: 403, code: 'permission_denied' });
  });
});

describe('GET /api/v1/merchant/{merchantID}', () => {
  test('when the merchant exists, then its record comes back with the bank account masked', async () => {
    const id = newId();
    await createMerchant({
      merchant_id: id,
      merchant_name: 'Tea House',
      license_no: 'LIC-9',
      legal_person: 'Han Meimei',
      bank_account: '6222020200112233',
    });
    const res = await answer<MerchantRecord>(await get(`/api/v1/merchant/${id}`));
    expect(res).toMatchObject({ status: 200, code: 'success' });
    expect(res.data).toEqual({
      merchant_id: id,
      merchant_name: 'Tea House',
      license_no: 'LIC-9',
      legal_person: 'Han Meimei',
      bank_account: '************2233',
      status: 'created',
      channel_code: null,
      sub_merchant_no: null,
      profit_sharing: null,
      channel_accounts: [],
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  test.each([
    ['1234', '****'],
    ['12345', '*2345'],
  ])('when the bank account is %s, then it is shown as %s', async (account, shown) => {
    const id = newId();
    await createMerchant({ merchant_id: id, bank_account: account });
    const res = await answer<MerchantRecord>(await get(`/api/v1/merchant/${id}`));
    expect(res.data?.bank_account).toBe(shown);
  });

  test('when the merchant has no bank account, then bank_account is null', async () => {
    const id = newId();
    await createMerchant({ merchant_id: id });
    const res = await answer<MerchantRecord>(await get(`/api/v1/merchant/${id}`));
    expect(res.data).toMatchObject({ bank_account: null, license_no: null, legal_person: null });
  });

  test('when the merchant does not exist, then 404 order_not_found "merchant not found"', async () => {
    const res = await answer(await get(`/api/v1/merchant/${newId()}`));
    expect(res).toMatchObject({
      status: 404,
      code: 'order_not_found',
      message: 'merchant not found',
      data: null,
    });
  });

  test('when another app asks for the merchant, then it answers exactly as if it did not exist', async () => {
    const id = newId();
    await createMerchant({ merchant_id: id });
    const theirs = await answer(await get(`/api/v1/merchant/${id}`, other));
    const absent = await answer(await get(`/api/v1/merchant/${newId()}`, other));
    expect(theirs).toMatchObject({ status: 404, code: 'order_not_found', message: 'merchant not found' });
    expect({ ...theirs, request_id: '' }).toEqual({ ...absent, request_id: '' });
  });

  test('when GET names upload-file, then it is read as a merchant id (not found)', async () => {
    const res = await answer(await get('/api/v1/merchant/upload-file'));
    expect(res).toMatchObject({ status: 404, code: 'order_not_found', message: 'merchant not found' });
  });
});

describe('GET /api/v1/merchant', () => {
  let lister: AppCredentials;
  const ids = ['list-a', 'list-b', 'list-c', 'list-d'];

  beforeAll(async () => {
    lister = await stack.createApp(['merchants'], 'lister');
    for (const id of ids) await createMerchant({ merchant_id: id, bank_account: '9876543210' }, lister);
    await stack.database.db.sequelize.query(
      `UPDATE merchants SET status = 'active' WHERE app_id = :appId AND merchant_id IN ('list-b', 'list-d')`,
      { replacements: { appId: lister.app_id } },
    );
  });

  const list = async (query: string, creds?: AppCredentials) =>
    answer<Page>(await get(`/api/v1/merchant${query}`, creds ?? lister));

  test('when no parameters are given, then every merchant comes back newest first with limit 20 and offset 0', async () => {
    const res = await list('');
    expect(res).toMatchObject({ status: 200, code: 'success', data: { limit: 20, offset: 0 } });
    expect(res.data?.list.map((m) => m.merchant_id)).toEqual([...ids].reverse());
    expect(res.data?.list[0]?.bank_account).toBe('******3210');
  });

  test('when status is given, then only merchants in exactly that status come back', async () => {
    const res = await list('?status=active');
    expect(res.data?.list.map((m) => m.merchant_id)).toEqual(['list-d', 'list-b']);
    expect((await list('?status=creat')).data?.list).toEqual([]);
  });

  test('when status is empty, then it is no filter', async () => {
    const res = await list('?status=');
    expect(res.data?.list).toHaveLength(4);
  });

  test('when limit and offset page, then they are applied and echoed', async () => {
    const res = await list('?limit=2&offset=1');
    expect(res.data).toMatchObject({ limit: 2, offset: 1 });
    expect(res.data?.list.map((m) => m.merchant_id)).toEqual(['list-c', 'list-b']);
  });

  test('when limit is not an integer, then it is read as 0 and the list is empty', async () => {
    const res = await list('?limit=abc');
    expect(res).toMatchObject({ status: 200, data: { list: [], limit: 0, offset: 0 } });
  });

  test('when limit is 1000, then it is read as 100', async () => {
    const res = await list('?limit=1000');
    expect(res.data).toMatchObject({ limit: 100, offset: 0 });
    expect(res.data?.list).toHaveLength(4);
  });

  test('when limit is negative, then it is read as 0', async () => {
    const res = await list('?limit=-5');
    expect(res.data).toMatchObject({ list: [], limit: 0 });
  });

  test('when offset is negative, then it is read as 0', async () => {
    const res = await list('?offset=-3');
    expect(res.data).toMatchObject({ offset: 0 });
    expect(res.data?.list).toHaveLength(4);
  });

  test('when offset is not an integer, then it is read as 0', async () => {
    const res = await list('?offset=xyz');
    expect(res.data).toMatchObject({ offset: 0 });
    expect(res.data?.list).toHaveLength(4);
  });

  test('when another app lists, then none of these merchants appear', async () => {
    const res = await list('', other);
    const theirs = res.data?.list.map((m) => m.merchant_id) ?? [];
    expect(res.status).toBe(200);
    expect(theirs.filter((id) => ids.includes(id))).toEqual([]);
  });

  test('when an unknown query parameter is sent, then 400 invalid_param', async () => {
    const res = await list('?colour=red');
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
  });
});

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2048)]);

function filePart(content: Buffer = PNG, filename = 'license.png'): Part {
  return { name: 'file', filename, contentType: 'image/png', content };
}

async function upload(
  parts: Part[],
  opts: { creds?: AppCredentials; sendBody?: Buffer } = {},
): Promise<{ status: number } & Envelope<{ file_id: string }>> {
  const { body, contentType } = multipart(parts);
  const creds = opts.creds ?? app;
  const target = '/api/v1/merchant/upload-file';
  const signed = signRequest({ method: 'POST', target, body, keyId: creds.app_id, secret: creds.secret });
  const res = await fetch(`${stack.baseUrl}${target}`, {
    method: 'POST',
    headers: { ...signed, 'content-type': contentType },
    body: opts.sendBody ?? body,
  });
  return answer<{ file_id: string }>(res);
}

async function sandboxFileCount(): Promise<number> {
  const [row] = await rows<{ n: string }>('SELECT count(*) AS n FROM sandbox_files', {});
  return Number(row?.n);
}

async function merchantFileCount(): Promise<number> {
  const [row] = await rows<{ n: string }>('SELECT count(*) AS n FROM merchant_files', {});
  return Number(row?.n);
}

/** The API runs in this process; its upload temp files carry this process's id. */
function tempFiles(): string[] {
  return fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(UPLOAD_TEMP_PREFIX));
}

/**
 * Sends a signed upload 64 KiB at a time, as fast as the server reads it, and stops sending once
 * the answer comes. Returns the answer and how many bytes of the request (headers included) the
 * server had read from the connection when it answered: what a refusal cost it.
 */
async function streamUpload(
  body: Buffer,
  contentType: string,
  opts: { chunked: boolean },
): Promise<{ status: number; envelope: Envelope; serverRead: number }> {
  const target = '/api/v1/merchant/upload-file';
  const signed = signRequest({ method: 'POST', target, body, keyId: app.app_id, secret: app.secret });
  let onRead: (bytes: number) => void = () => undefined;
  const serverRead = new Promise<number>((resolve) => (onRead = resolve));
  const onRequest = (req: IncomingMessage, res: http.ServerResponse) => {
    if (req.url === target) res.once('finish', () => onRead(req.socket.bytesRead));
  };
  // First: Express rewrites req.url as it routes.
  stack.server.prependListener('request', onRequest);
  try {
    const { hostname, port } = new URL(stack.baseUrl);
    const req = http.request({
      host: hostname,
      port,
      method: 'POST',
      path: target,
      headers: {
        ...signed,
        'content-type': contentType,
        ...(opts.chunked ? {} : { 'content-length': String(body.length) }),
      },
    });
    let answered = false;
    const answer = new Promise<IncomingMessage>((resolve, reject) => {
      req.once('response', (res) => ((answered = true), resolve(res)));
      // A server that answered before the body was sent closes the connection under the rest.
      req.on('error', (err) => (answered ? undefined : reject(err)));
    });
    answer.catch(() => undefined);
    const chunk = 64 * 1024;
    for (let at = 0; at < body.length && !answered; at += chunk) {
      if (!req.write(body.subarray(at, at + chunk))) {
        await Promise.race([once(req, 'drain').catch(() => undefined), answer.catch(() => undefined)]);
      }
    }
    if (!answered) req.end();
    const res = await answer;
    const text = await new Promise<string>((resolve) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      // Whole when it ends, or when the request closes under an answer already complete.
      const done = () => resolve(Buffer.concat(parts).toString());
      res.once('end', done).once('close', done);
    });
    req.destroy();
    return {
      status: res.statusCode ?? 0,
      envelope: JSON.parse(text) as Envelope,
      serverRead: await serverRead,
    };
  } finally {
    stack.server.off('request', onRequest);
  }
}

const BODY_TOO_LARGE = 'request body must be at most 5 MiB of file and 128 KiB of other form parts';

/** Nothing reached the channel and nothing was recorded. */
async function expectNothingForwarded(run: () => Promise<unknown>): Promise<void> {
  const before = [await sandboxFileCount(), await merchantFileCount()];
  await run();
  expect([await sandboxFileCount(), await merchantFileCount()]).toEqual(before);
}

describe('POST /api/v1/merchant/upload-file', () => {
  test('when a file is uploaded, then the channel file_id comes back and its size, SHA-256 and base name are recorded', async () => {
    const res = await upload([{ name: 'file_media_type', value: 'image/png' }, filePart()]);
    expect(res).toMatchObject({ status: 200, code: 'success' });
    const fileId = res.data!.file_id;
    expect(fileId).toMatch(/^sbx_file_/);
    const [row] = await rows<Record<string, unknown>>(
      `SELECT app_id, channel_code, media_type, size, sha256, file_name FROM merchant_files WHERE file_id = :fileId`,
      { fileId },
    );
    expect(row).toEqual({
      app_id: app.app_id,
      channel_code: 'sandbox',
      media_type: 'image/png',
      size: String(PNG.length),
      sha256: createHash('sha256').update(PNG).digest('hex'),
      file_name: 'license.png',
    });
    const [atChannel] = await rows<{ size: number; sha256: string }>(
      'SELECT size, sha256 FROM sandbox_files WHERE file_id = :fileId',
      { fileId },
    );
    expect(atChannel).toEqual({ size: PNG.length, sha256: row?.sha256 });
    expect(tempFiles()).toEqual([]);
  });

  test('when channel_code is given as sandbox and the file comes first, then the upload succeeds', async () => {
    const pdf = Buffer.from('%PDF-1.4\n% test\n');
    const res = await upload([
      filePart(pdf, 'scan.pdf'),
      { name: 'channel_code', value: 'sandbox' },
      { name: 'file_media_type', value: 'application/pdf' },
    ]);
    expect(res).toMatchObject({ status: 200, code: 'success' });
  });

  test('when the file name climbs directories, then only its base name is forwarded', async () => {
    const res = await upload([
      { name: 'file_media_type', value: 'image/png' },
      filePart(PNG, '../../etc/passwd'),
    ]);
    expect(res).toMatchObject({ status: 200, code: 'success' });
    const [atChannel] = await rows<{ file_name: string }>(
      'SELECT file_name FROM sandbox_files WHERE file_id = :fileId',
      { fileId: res.data!.file_id },
    );
    expect(atChannel?.file_name).toBe('passwd');
    const [recorded] = await rows<{ file_name: string }>(
      'SELECT file_name FROM merchant_files WHERE file_id = :fileId',
      { fileId: res.data!.file_id },
    );
    expect(recorded?.file_name).toBe('passwd');
  });

  test('when the file name uses backslashes, then only its base name is forwarded', async () => {
    const res = await upload([
      { name: 'file_media_type', value: 'image/png' },
      filePart(PNG, 'C:\\Users\\me\\id.png'),
    ]);
    expect(res).toMatchObject({ status: 200, code: 'success' });
    const [atChannel] = await rows<{ file_name: string }>(
      'SELECT file_name FROM sandbox_files WHERE file_id = :fileId',
      { fileId: res.data!.file_id },
    );
    expect(atChannel?.file_name).toBe('id.png');
  });

  test('when the file is exactly 5 MiB, then it is accepted', async () => {
    const big = randomBytes(5 * 1024 * 1024);
    const res = await upload([
      { name: 'file_media_type', value: 'application/pdf' },
      filePart(big, 'big.pdf'),
    ]);
    expect(res).toMatchObject({ status: 200, code: 'success' });
    const [row] = await rows<{ size: string }>('SELECT size FROM merchant_files WHERE file_id = :fileId', {
      fileId: res.data!.file_id,
    });
    expect(row?.size).toBe(String(big.length));
  });

  test('when file_media_type is empty, then 400 invalid_param "file_media_type is required"', async () => {
    await expectNothingForwarded(async () => {
      const res = await upload([{ name: 'file_media_type', value: '' }, filePart()]);
      expect(res).toMatchObject({
        status: 400,
        code: 'invalid_param',
        message: 'file_media_type is required',
      });
    });
  });

  test('when file_media_type is absent, then 400 invalid_param "file_media_type is required"', async () => {
    const res = await upload([filePart()]);
    expect(res).toMatchObject({ status: 400, code: 'invalid_param', message: 'file_media_type is required' });
  });

  test('when the file part is missing, then 400 invalid_param', async () => {
    const res = await upload([{ name: 'file_media_type', value: 'image/png' }]);
    expect(res).toMatchObject({ status: 400, code: 'invalid_param', message: 'file is required' });
  });

  test('when file is sent as a text part, then 400 invalid_param', async () => {
    const res = await upload([
      { name: 'file_media_type', value: 'image/png' },
      { name: 'file', value: 'not a file' },
    ]);
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(res.message).toMatch(/file must be a file part/);
  });

  test('when file_media_type is not an accepted type, then 400 invalid_param', async () => {
    await expectNothingForwarded(async () => {
      const res = await upload([{ name: 'file_media_type', value: 'image/gif' }, filePart()]);
      expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
      expect(res.message).toMatch(
        /file_media_type must be one of image\/jpeg, image\/png, image\/bmp, application\/pdf/,
      );
    });
  });

  test('when the file is 6 MiB, then 400 invalid_param and nothing is forwarded', async () => {
    await expectNothingForwarded(async () => {
      const res = await upload([
        { name: 'file_media_type', value: 'application/pdf' },
        filePart(randomBytes(6 * 1024 * 1024), 'huge.pdf'),
      ]);
      expect(res).toMatchObject({
        status: 400,
        code: 'invalid_param',
        message: 'file must be at most 5 MiB',
      });
    });
  });

  test('when the file is empty, then 400 invalid_param', async () => {
    const res = await upload([{ name: 'file_media_type', value: 'image/png' }, filePart(Buffer.alloc(0))]);
    expect(res).toMatchObject({ status: 400, code: 'invalid_param', message: 'file is empty' });
  });

  test('when two file parts are sent, then 400 invalid_param', async () => {
    const res = await upload([{ name: 'file_media_type', value: 'image/png' }, filePart(), filePart()]);
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
  });

  test('when uploads are refused after their file began, then no temp file is left behind', async () => {
    const before = new Set(tempFiles());
    const refused = [
      await upload([{ name: 'file_media_type', value: 'image/png' }, filePart(), filePart()]),
      await upload([{ name: 'file_media_type', value: 'image/png' }, filePart(Buffer.alloc(0))]),
      await upload([{ name: 'file_media_type', value: 'image/gif' }, filePart()]),
      await upload([
        filePart(randomBytes(6 * 1024 * 1024), 'huge.png'),
        { name: 'file_media_type', value: 'image/png' },
      ]),
    ];
    expect(refused.map((r) => r.status)).toEqual([400, 400, 400, 400]);
    const left = tempFiles().filter((f) => !before.has(f));
    expect(left).toEqual([]);
  });

  test('when an unexpected part is sent, then 400 invalid_param names it', async () => {
    const res = await upload([
      { name: 'file_media_type', value: 'image/png' },
      { name: 'note', value: 'hello' },
      filePart(),
    ]);
    expect(res).toMatchObject({ status: 400, code: 'invalid_param', message: 'unexpected form part "note"' });
  });

  describe.each([
    // Its length unknown until it ends: read part by part, and refused at the first that cannot be taken.
    ['chunked', true, 'unexpected form part "junk"'],
    // Its length announced: refused before a byte of it is read.
    ['with its Content-Length', false, BODY_TOO_LARGE],
  ])('an upload sent %s', (_how, chunked, junkMessage) => {
    const JUNK = 48 * 1024 * 1024;

    test('when a 48 MiB part not named file follows file_media_type, then 400 names why and the server stops reading', async () => {
      await expectNothingForwarded(async () => {
        const { body, contentType } = multipart([
          { name: 'file_media_type', value: 'image/png' },
          {
            name: 'junk',
            filename: 'junk.bin',
            contentType: 'application/octet-stream',
            content: Buffer.alloc(JUNK, 0x61),
          },
          filePart(),
        ]);
        const res = await streamUpload(body, contentType, { chunked });
        expect(res.status).toBe(400);
        expect(res.envelope).toMatchObject({ code: 'invalid_param', message: junkMessage, data: null });
        // A bounded read, however the client sends it: never the 48 MiB.
        expect(res.serverRead).toBeGreaterThan(0);
        expect(res.serverRead).toBeLessThan(3 * MAX_UPLOAD_BYTES);
      });
    });

    test('when 48 MiB come before the first part, then 400 and the server stops reading', async () => {
      await expectNothingForwarded(async () => {
        const { body: form, contentType } = multipart([
          { name: 'file_media_type', value: 'image/png' },
          filePart(),
        ]);
        // A multipart preamble: bytes before the first boundary, which the parser skips.
        const body = Buffer.concat([Buffer.alloc(JUNK, 0x61), Buffer.from('\r\n'), form]);
        const res = await streamUpload(body, contentType, { chunked });
        expect(res.status).toBe(400);
        expect(res.envelope).toMatchObject({ code: 'invalid_param', message: BODY_TOO_LARGE, data: null });
        expect(res.serverRead).toBeGreaterThan(0);
        expect(res.serverRead).toBeLessThan(3 * MAX_UPLOAD_BYTES);
      });
    });
  });

  test('when the request is not multipart, then 400 invalid_param', async () => {
    const res = await answer(
      await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/merchant/upload-file', {
        json: { file_media_type: 'image/png' },
      }),
    );
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(res.message).toMatch(/multipart\/form-data/);
  });

  test('when the multipart body is cut short, then 400 invalid_param', async () => {
    const { body, contentType } = multipart([{ name: 'file_media_type', value: 'image/png' }, filePart()]);
    const cut = body.subarray(0, body.length - 40);
    const res = await answer(
      await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/merchant/upload-file', {
        body: cut,
        headers: { 'content-type': contentType },
      }),
    );
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
  });

  test('when the body does not match its Content-Digest, then 401 unauthorized and nothing is forwarded', async () => {
    await expectNothingForwarded(async () => {
      const parts = [{ name: 'file_media_type', value: 'image/png' }, filePart()];
      const { body } = multipart(parts);
      // Same length and boundary-free bytes changed: one byte of the file flipped.
      const tampered = Buffer.from(body);
      const at = body.indexOf(PNG) + 100;
      tampered[at] = tampered[at]! ^ 0xff;
      const res = await upload(parts, { sendBody: tampered });
      expect(res).toMatchObject({
        status: 401,
        code: 'unauthorized',
        message: 'Content-Digest does not match the body',
      });
    });
  });

  test('when a 6 MiB body that cannot be parsed does not match its Content-Digest, then 401 unauthorized comes before the 400', async () => {
    const parts = [
      { name: 'file_media_type', value: 'image/png' },
      filePart(randomBytes(6 * 1024 * 1024), 'huge.png'),
    ];
    const res = await upload(parts, { sendBody: multipart(parts).body });
    expect(res).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  test('when channel_code names no channel, then 500 internal_system and nothing is forwarded', async () => {
    await expectNothingForwarded(async () => {
      const res = await upload([
        { name: 'channel_code', value: 'nowhere' },
        { name: 'file_media_type', value: 'image/png' },
        filePart(),
      ]);
      expect(res).toMatchObject({
        status: 500,
        code: 'internal_system',
        message: 'channel nowhere does not support onboarding',
      });
    });
  });

  test('when the app lacks the merchants scope, then 403 permission_denied', async () => {
    const payments = await stack.createApp(['payments'], 'payments-only-upload');
    const res = await upload([{ name: 'file_media_type', value: 'image/png' }, filePart()], {
      creds: payments,
    });
    expect(res).toMatchObject({ status: 403, code: 'permission_denied' });
  });
});
