/**
 * The offline WeChat Pay sandbox's onboarding (applyment4sub) driven by wechatpay-axios-plugin
 * alone, over real HTTP with the library's response verification on: media uploads in the
 * library's multipart (signed over `meta`), applyments whose sensitive fields the library's
 * Rsa.encrypt sealed, and the states a query walks through, sign page included.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Multipart, Rsa, Wechatpay } from 'wechatpay-axios-plugin';
import {
  createWechatpaySandbox,
  generateWechatpaySandboxKeys,
  type WechatpaySandbox,
  type WechatpaySandboxKeys,
} from '../../sandbox/wechatpay';
import {
  APPLICANT,
  JPEG_BYTES,
  PDF_BYTES,
  PNG_BYTES,
  applymentData,
  type ApplymentMedia,
} from '../support/wechatpay-applyment';

jest.setTimeout(30_000);

interface LibraryResponse {
  status: number;
  data: unknown;
}
type Segment =
  | 'v3'
  | 'merchant'
  | 'media'
  | 'upload'
  | 'applyment4sub'
  | 'applyment'
  | 'business_code'
  | 'applyment_id'
  | '_business_code_'
  | '_applyment_id_';
type Chain = { readonly [K in Segment]: Chain } & {
  get(config: Record<string, unknown>): Promise<LibraryResponse>;
  post(data: unknown, config?: Record<string, unknown>): Promise<LibraryResponse>;
};
interface Answer {
  code?: string;
  message?: string;
  media_id?: string;
  applyment_id?: number;
  business_code?: string;
  applyment_state?: string;
  applyment_state_msg?: string;
  sub_mchid?: string;
  sign_url?: string;
  audit_detail?: { field: string; field_name: string; reject_reason: string }[];
}

let keys: WechatpaySandboxKeys;
let sandbox: WechatpaySandbox;
let server: http.Server;
let base = '';
let wxpay: Chain;
let sequence = 0;

const ANY_STATUS = { validateStatus: () => true };
const SEALED_WITH = () => ({ 'Wechatpay-Serial': keys.platformPublicKeyId });

async function call(request: Promise<LibraryResponse>): Promise<{ status: number; data: Answer }> {
  const res = await request;
  return { status: res.status, data: res.data as Answer };
}

/**
 * An upload as the library's docs show it (its meta in the config, the form's own headers), with
 * the form's bytes as the body: handed the form object itself, axios 1.x takes it for a FormData,
 * encodes it again under its own boundary and drops the file part's filename.
 */
function upload(bytes: Buffer, filename: string, meta = { filename, sha256: sha256(bytes) }) {
  const form = new Multipart().append('meta', JSON.stringify(meta)).append('file', bytes, filename);
  return call(
    wxpay.v3.merchant.media.upload.post(form.getBuffer(), {
      meta,
      headers: form.getHeaders(),
      ...ANY_STATUS,
    }),
  );
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function media(): Promise<ApplymentMedia> {
  const ids: string[] = [];
  for (const name of ['license.png', 'id-front.jpg', 'id-back.png']) {
    const res = await upload(name.endsWith('.jpg') ? JPEG_BYTES : PNG_BYTES, name);
    expect(res.status).toBe(200);
    ids.push(res.data.media_id!);
  }
  return { licenseCopy: ids[0]!, idCardCopy: ids[1]!, idCardNational: ids[2]! };
}

const SENSITIVE = new Set([
  'contact_name',
  'mobile_phone',
  'contact_email',
  'id_card_name',
  'id_card_number',
  'account_name',
  'account_number',
]);

/** The body with its sensitive fields sealed, as a client of WeChat Pay must send it. */
function sealed(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => sealed(v));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sealed(v, k)]));
  }
  return key !== undefined && SENSITIVE.has(key) && typeof value === 'string'
    ? Rsa.encrypt(value, keys.platformPublicKeyPem)
    : value;
}

function businessCode(): string {
  return `BC${Date.now()}${sequence++}`;
}

const submit = (body: unknown, headers: Record<string, string> = SEALED_WITH()) =>
  call(wxpay.v3.applyment4sub.applyment.post(body, { headers, ...ANY_STATUS }));

const byCode = (code: string) =>
  call(
    wxpay.v3.applyment4sub.applyment.business_code._business_code_.get({
      business_code: code,
      ...ANY_STATUS,
    }),
  );

const byId = (id: number) =>
  call(wxpay.v3.applyment4sub.applyment.applyment_id._applyment_id_.get({ applyment_id: id, ...ANY_STATUS }));

async function submitted(shortname?: string): Promise<{ code: string; applymentId: number }> {
  const code = businessCode();
  const res = await submit({
    business_code: code,
    ...(sealed(applymentData(await media(), shortname)) as object),
  });
  expect(res.status).toBe(200);
  expect(res.data.applyment_id).toEqual(expect.any(Number));
  return { code, applymentId: res.data.applyment_id! };
}

async function act(signUrl: string, action: string) {
  const res = await fetch(signUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechatpay`;
  sandbox = createWechatpaySandbox({ keys, publicBaseUrl: base });
  app.use('/wechatpay', sandbox.router);
  wxpay = new Wechatpay({
    mchid: keys.spMchid,
    serial: keys.merchantSerial,
    privateKey: keys.merchantPrivateKeyPem,
    certs: { [keys.platformPublicKeyId]: keys.platformPublicKeyPem },
    baseURL: `${base}/`,
  }) as unknown as Chain;
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('media upload', () => {
  test('when a PNG is uploaded with its meta, then a media_id comes back in a signed answer', async () => {
    const res = await upload(PNG_BYTES, 'license.png');
    expect(res.status).toBe(200);
    expect(res.data.media_id).toMatch(/^V1_[A-Za-z0-9_-]{40,}$/);
  });

  test('when meta.sha256 is not the digest of the file, then 400 PARAM_ERROR', async () => {
    const res = await upload(PNG_BYTES, 'license.png', {
      filename: 'license.png',
      sha256: sha256(JPEG_BYTES),
    });
    expect(res.status).toBe(400);
    expect(res.data).toMatchObject({ code: 'PARAM_ERROR', message: expect.stringContaining('sha256') });
  });

  test('when a PDF is uploaded, then 400 PARAM_ERROR: only JPG, BMP and PNG images', async () => {
    const res = await upload(PDF_BYTES, 'license.pdf');
    expect(res.status).toBe(400);
    expect(res.data.message).toContain('JPG、BMP、PNG');
  });

  test('when the bytes are not the image the name says, then 400 PARAM_ERROR', async () => {
    const res = await upload(PDF_BYTES, 'license.png');
    expect(res.status).toBe(400);
    expect(res.data.message).toContain('not the image');
  });

  test('when the signature covers another meta than the one sent, then 401 SIGN_ERROR', async () => {
    const meta = { filename: 'license.png', sha256: sha256(PNG_BYTES) };
    const form = new Multipart()
      .append('meta', JSON.stringify({ ...meta, filename: 'other.png' }))
      .append('file', PNG_BYTES, 'license.png');
    const res = await call(
      wxpay.v3.merchant.media.upload.post(form.getBuffer(), {
        meta,
        headers: form.getHeaders(),
        ...ANY_STATUS,
      }),
    );
    expect(res.status).toBe(401);
    expect(res.data.code).toBe('SIGN_ERROR');
  });
});

describe('applyment', () => {
  test('when an applyment is submitted, then its sealed fields open to what was sealed, and queries walk it to FINISHED with a sub_mchid', async () => {
    const { code, applymentId } = await submitted();
    const record = sandbox.applyment(code)!;
    const subject = record.body.subject_info as { identity_info: { id_card_info: Record<string, string> } };
    expect(subject.identity_info.id_card_info.id_card_number).toBe(APPLICANT.idCardNumber);
    expect((record.body.bank_account_info as Record<string, string>).account_number).toBe(
      APPLICANT.accountNumber,
    );

    const first = await byCode(code);
    expect(first.status).toBe(200);
    expect(first.data).toMatchObject({
      business_code: code,
      applyment_id: applymentId,
      applyment_state: 'APPLYMENT_STATE_AUDITING',
    });
    expect(first.data.sub_mchid).toBeUndefined();
    const second = await byId(applymentId);
    expect(second.data.applyment_state).toBe('APPLYMENT_STATE_FINISHED');
    expect(second.data.sub_mchid).toMatch(/^\d{10}$/);
    expect((await byCode(code)).data).toEqual(second.data);
  });

  test('when a sensitive field is sent in plain text, then 400 PARAM_ERROR names it', async () => {
    const body = sealed(applymentData(await media())) as { contact_info: Record<string, string> };
    body.contact_info.mobile_phone = APPLICANT.mobilePhone;
    const res = await submit({ business_code: businessCode(), ...body });
    expect(res.status).toBe(400);
    expect(res.data.message).toContain('contact_info.mobile_phone');
  });

  test('when sealed fields come without Wechatpay-Serial, then 400 PARAM_ERROR asks for it', async () => {
    const res = await submit(
      { business_code: businessCode(), ...(sealed(applymentData(await media())) as object) },
      {},
    );
    expect(res.status).toBe(400);
    expect(res.data.message).toContain('Wechatpay-Serial');
  });

  test('when a media_id was never uploaded, then 400 PARAM_ERROR names the field', async () => {
    const ids = await media();
    const body = sealed(applymentData({ ...ids, licenseCopy: 'V1_never-uploaded' }));
    const res = await submit({ business_code: businessCode(), ...(body as object) });
    expect(res.status).toBe(400);
    expect(res.data.message).toContain('subject_info.business_license_info.license_copy');
  });

  test('when a required field is missing, then 400 PARAM_ERROR', async () => {
    const body = sealed(applymentData(await media())) as Record<string, unknown>;
    delete body.settlement_info;
    const res = await submit({ business_code: businessCode(), ...body });
    expect(res.status).toBe(400);
    expect(res.data.message).toContain('settlement_info');
  });

  test('when a business_code is submitted twice, then the second is refused and the first stands', async () => {
    const { code, applymentId } = await submitted();
    const again = await submit({ business_code: code, ...(sealed(applymentData(await media())) as object) });
    expect(again.status).toBe(400);
    expect(again.data.code).toBe('INVALID_REQUEST');
    expect((await byCode(code)).data.applyment_id).toBe(applymentId);
  });

  test('when the short name injects [sandbox:rejected], then the audit ends REJECTED with audit_detail', async () => {
    const { code } = await submitted('Tea [sandbox:rejected]');
    await byCode(code);
    const res = await byCode(code);
    expect(res.data.applyment_state).toBe('APPLYMENT_STATE_REJECTED');
    expect(res.data.audit_detail).toEqual([
      expect.objectContaining({
        field: 'business_info.merchant_shortname',
        reject_reason: expect.any(String),
      }),
    ]);
    expect(res.data.sub_mchid).toBeUndefined();
  });

  test('when the short name injects [sandbox:to-be-confirmed], then it waits at its sign_url for a confirmation and a signature, then finishes', async () => {
    const { code } = await submitted('Tea [sandbox:to-be-confirmed]');
    await byCode(code);
    const waiting = await byCode(code);
    expect(waiting.data.applyment_state).toBe('APPLYMENT_STATE_TO_BE_CONFIRMED');
    const signUrl = waiting.data.sign_url!;
    expect(signUrl).toMatch(new RegExp(`^${base}/applyment/sign/[0-9a-f]{32}$`));
    expect((await byCode(code)).data.applyment_state).toBe('APPLYMENT_STATE_TO_BE_CONFIRMED');

    const page = await fetch(signUrl);
    expect(await page.text()).toContain('Confirm the settlement account');
    expect(await act(signUrl, 'sign')).toMatchObject({ status: 400 });
    expect((await act(signUrl, 'confirm')).body.applyment_state).toBe('APPLYMENT_STATE_TO_BE_SIGNED');
    expect((await byCode(code)).data).toMatchObject({
      applyment_state: 'APPLYMENT_STATE_TO_BE_SIGNED',
      sign_url: signUrl,
    });
    expect((await act(signUrl, 'sign')).body.applyment_state).toBe('APPLYMENT_STATE_SIGNING');
    const done = await byCode(code);
    expect(done.data.applyment_state).toBe('APPLYMENT_STATE_FINISHED');
    expect(done.data.sub_mchid).toMatch(/^\d{10}$/);
    expect(done.data.sign_url).toBeUndefined();
  });

  test('when an unknown business_code is queried, then 404 RESOURCE_NOT_EXISTS', async () => {
    const res = await byCode('BC-none');
    expect(res.status).toBe(404);
    expect(res.data.code).toBe('RESOURCE_NOT_EXISTS');
  });
});
