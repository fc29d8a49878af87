/**
 * Applicant data sealed at rest: merchant_applications.submit_data and channel_last_answer,
 * merchants.legal_person and bank_account hold no plain text once written or re-sealed, while
 * every answer of the API and what reaches the channel stay as they were; rows written in plain
 * text before are read as they were and sealed by `durapay migrate` and `durapay keys reseal`.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { QueryTypes } from 'sequelize';
import { sealLegacyApplicantData } from '../../src/cli/applicant-data';
import { ApplicationRepository } from '../../src/modules/applications/repository';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { MerchantRepository } from '../../src/modules/merchants';
import { createActivities } from '../../src/activities';
import { FieldSealer } from '../../src/platform/crypto/field-sealer';
import { newPayloadKeyEntry, parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { serveApi, startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { APPLICANT, applymentData, applymentMedia } from '../support/wechatpay-applyment';
import { durapayBin } from '../support/state';

jest.setTimeout(180_000);
const run = promisify(execFile);

// The stack seals with seal-a and still opens seal-b, so that rotating to seal-b (the last test)
// leaves everything readable by the stack's own API too.
const KEY_A = newPayloadKeyEntry('seal-a');
const KEY_B = newPayloadKeyEntry('seal-b');

let stack: TestStack;
let app: AppCredentials;

beforeAll(async () => {
  stack = await startTestStack({
    timeScale: 0.001,
    wechatpay: { timeScale: 0.01 },
    payloadKeys: `${KEY_A},${KEY_B}`,
  });
  app = await stack.createApp(['merchants', 'payments']);
});
afterAll(async () => {
  await stack?.stop();
});

/** What a test looks for where it must not be. */
const SECRETS = [
  APPLICANT.idCardNumber,
  APPLICANT.idCardName,
  APPLICANT.accountNumber,
  APPLICANT.mobilePhone,
  'owner@tea-house.example',
  'Han Meimei',
];

const call = async <T = Record<string, unknown>>(
  method: 'GET' | 'POST',
  path: string,
  json?: unknown,
  base = stack.baseUrl,
) => {
  const res = await signedFetch(base, app, method, path, json === undefined ? {} : { json });
  return { status: res.status, ...(await envelope<T>(res)) };
};

async function query<T extends object>(
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<T[]> {
  return stack.database.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

/** The whole row as text, every column: what a dump or a backup of it would show. */
async function applicationRowText(applicationId: string): Promise<string> {
  const [row] = await query<{ t: string }>(
    'SELECT row_to_json(a)::text AS t FROM merchant_applications a WHERE application_id = :applicationId',
    { applicationId },
  );
  return row!.t;
}

async function merchantRowText(merchantId: string): Promise<string> {
  const [row] = await query<{ t: string }>(
    'SELECT row_to_json(m)::text AS t FROM merchants m WHERE app_id = :appId AND merchant_id = :merchantId',
    { appId: app.app_id, merchantId },
  );
  return row!.t;
}

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

async function createMerchant(extra: Record<string, unknown> = {}): Promise<string> {
  const merchantId = `m-${randomUUID().slice(0, 8)}`;
  const created = await call('POST', '/api/v1/merchant', {
    merchant_id: merchantId,
    merchant_name: 'Tea House',
    ...extra,
  });
  expect(created.code).toBe('success');
  return merchantId;
}

async function auditUntil(merchantId: string, status: string) {
  return until(`application ${status}`, async () => {
    const a = await call('GET', `/api/v1/merchant/${merchantId}/audit`);
    return a.data?.status === status ? a.data : undefined;
  });
}

async function durapay(env: Record<string, string>, ...args: string[]): Promise<string> {
  const { stderr } = await run(process.execPath, [durapayBin(), ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: stack.database.url,
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  return stderr;
}

/** The applicant's data a sandbox application carries: identity, name, account, contact. */
const SANDBOX_SUBMIT_DATA = {
  shop: 'tea',
  identity: { id_card_number: APPLICANT.idCardNumber, id_card_name: APPLICANT.idCardName },
  bank_account: APPLICANT.accountNumber,
  contact: { mobile_phone: APPLICANT.mobilePhone, email: 'owner@tea-house.example' },
};

const MERCHANT_VIEW = {
  merchant_name: 'Tea House',
  legal_person: 'Han Meimei',
  bank_account: '************2233',
};

test('when a merchant is created with a legal person and a bank account, then its row holds neither in plain text, and get and list answer them as before', async () => {
  const merchantId = await createMerchant({ legal_person: 'Han Meimei', bank_account: '6222020200112233' });

  const text = await merchantRowText(merchantId);
  expectNoSecret(text);
  expect(text).not.toContain('6222020200112233');
  const [row] = await query<{ legal_person: string; bank_account: string }>(
    'SELECT legal_person, bank_account FROM merchants WHERE app_id = :appId AND merchant_id = :merchantId',
    { appId: app.app_id, merchantId },
  );
  expect(FieldSealer.keyIdOf(row!.legal_person)).toBe('seal-a');
  expect(FieldSealer.keyIdOf(row!.bank_account)).toBe('seal-a');

  const found = await call('GET', `/api/v1/merchant/${merchantId}`);
  expect(found.data).toMatchObject({ merchant_id: merchantId, ...MERCHANT_VIEW });
  const listed = await call<{ list: Record<string, unknown>[] }>('GET', '/api/v1/merchant?limit=100');
  expect(listed.data!.list.find((m) => m.merchant_id === merchantId)).toMatchObject(MERCHANT_VIEW);
});

test('when a merchant applies at the sandbox channel, then the application row holds none of its data in plain text, while the channel gets it whole and the audit answers as before', async () => {
  const merchantId = await createMerchant({ legal_person: 'Han Meimei', bank_account: '6222020200112233' });
  const applied = await call<{ application_id: string }>('POST', `/api/v1/merchant/${merchantId}/apply`, {
    channel_code: 'sandbox',
    submit_data: SANDBOX_SUBMIT_DATA,
  });
  expect(applied.code).toBe('success');
  const applicationId = applied.data!.application_id;

  const done = await auditUntil(merchantId, 'finished');
  expect(done).toMatchObject({
    application_id: applicationId,
    merchant_id: merchantId,
    channel_code: 'sandbox',
    status: 'finished',
    sub_merchant_no: expect.any(String),
    reject_reason: null,
    audit_detail: expect.objectContaining({ merchant_id: merchantId }),
  });

  // The channel got the application opened: submit_data whole, the merchant's record in full.
  const [atChannel] = await query<{ submit_data: unknown; merchant: Record<string, unknown> }>(
    'SELECT submit_data, merchant FROM sandbox_applications WHERE application_id = :applicationId',
    { applicationId },
  );
  expect(atChannel!.submit_data).toEqual(SANDBOX_SUBMIT_DATA);
  expect(atChannel!.merchant).toMatchObject({ legal_person: 'Han Meimei', bank_account: '6222020200112233' });

  // durapay's row: sealed, bound to this application.
  expectNoSecret(await applicationRowText(applicationId));
  const [row] = await query<{ submit_data: string; channel_last_answer: string }>(
    'SELECT submit_data, channel_last_answer FROM merchant_applications WHERE application_id = :applicationId',
    { applicationId },
  );
  expect(FieldSealer.keyIdOf(row!.submit_data)).toBe('seal-a');
  expect(FieldSealer.keyIdOf(row!.channel_last_answer)).toBe('seal-a');
  const repo = new ApplicationRepository(stack.database.db, stack.payloadKeys.keyring);
  expect(await repo.submitDataOf(applicationId)).toEqual(SANDBOX_SUBMIT_DATA);
  expect(await repo.channelLastAnswerOf(applicationId)).toMatchObject({
    status: 'finished',
    subMerchantNo: done.sub_merchant_no,
  });
});

test('when a merchant applies at WeChat Pay with an identity card, then no row holds the applicant in plain text, and the applyment carries it and is audited to finished', async () => {
  const merchantId = await createMerchant({ bank_account: APPLICANT.accountNumber });
  const submitData = applymentData(await applymentMedia(stack.baseUrl, app));
  const applied = await call<{ application_id: string }>('POST', `/api/v1/merchant/${merchantId}/apply`, {
    channel_code: 'wechatpay',
    submit_data: submitData,
  });
  expect(applied.code).toBe('success');
  const applicationId = applied.data!.application_id;

  const done = await auditUntil(merchantId, 'finished');
  const applyment = stack.wechatpay!.sandbox.applyment(applicationId)!;
  expect(done).toMatchObject({
    application_id: applicationId,
    channel_application_no: String(applyment.applymentId),
    sub_merchant_no: applyment.subMchid,
    audit_detail: { applyment_state: 'APPLYMENT_STATE_FINISHED' },
  });
  const identity = (
    applyment.body.subject_info as { identity_info: { id_card_info: Record<string, string> } }
  ).identity_info.id_card_info;
  expect(identity.id_card_number).toBe(APPLICANT.idCardNumber);
  expect((applyment.body.bank_account_info as Record<string, string>).account_number).toBe(
    APPLICANT.accountNumber,
  );

  expectNoSecret(await applicationRowText(applicationId));
  expectNoSecret(await merchantRowText(merchantId));
  const repo = new ApplicationRepository(stack.database.db, stack.payloadKeys.keyring);
  expect(await repo.submitDataOf(applicationId)).toEqual(submitData);
});

/** A merchant and an application as the code before sealing wrote them. */
async function insertLegacy(merchantId: string, applicationId: string): Promise<void> {
  await stack.database.db.sequelize.query(
    `INSERT INTO merchants (app_id, merchant_id, merchant_name, legal_person, bank_account, status, created_at, updated_at)
     VALUES (:appId, :merchantId, 'Tea House', 'Han Meimei', '6222020200112233', 'created', now(), now())`,
    { replacements: { appId: app.app_id, merchantId } },
  );
  await stack.database.db.sequelize.query(
    `INSERT INTO merchant_applications (application_id, app_id, merchant_id, channel_code, status, submit_data,
                                        channel_last_answer, audit_detail, notify_url, submitted_at, updated_at)
     VALUES (:applicationId, :appId, :merchantId, 'sandbox', 'auditing', CAST(:submitData AS jsonb),
             CAST(:answer AS jsonb), CAST(:detail AS jsonb), NULL, now(), now())`,
    {
      replacements: {
        applicationId,
        appId: app.app_id,
        merchantId,
        submitData: JSON.stringify(SANDBOX_SUBMIT_DATA),
        answer: JSON.stringify(LEGACY_ANSWER),
        detail: JSON.stringify(LEGACY_ANSWER.detail),
      },
    },
  );
}

const LEGACY_ANSWER = {
  status: 'auditing',
  channelApplicationNo: 'SBXA-LEGACY',
  subMerchantNo: null,
  signUrl: null,
  rejectReason: null,
  detail: { audit_step: 1, message: 'under review' },
};

test('when rows were written in plain text before sealing, then the API reads them, durapay migrate seals them and they read the same, and a second run seals nothing', async () => {
  const merchantId = `m-${randomUUID().slice(0, 8)}`;
  const applicationId = `apl_legacy${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await insertLegacy(merchantId, applicationId);
  expect(await merchantRowText(merchantId)).toContain('Han Meimei');
  expect(await applicationRowText(applicationId)).toContain(APPLICANT.accountNumber);

  const reads = async () => ({
    merchant: (await call('GET', `/api/v1/merchant/${merchantId}`)).data,
    listed: (
      await call<{ list: Record<string, unknown>[] }>('GET', '/api/v1/merchant?limit=100')
    ).data!.list.find((m) => m.merchant_id === merchantId),
    audit: (await call('GET', `/api/v1/merchant/${merchantId}/audit`)).data,
    submitData: await new ApplicationRepository(stack.database.db, stack.payloadKeys.keyring).submitDataOf(
      applicationId,
    ),
    answer: await new ApplicationRepository(stack.database.db, stack.payloadKeys.keyring).channelLastAnswerOf(
      applicationId,
    ),
  });
  const before = await reads();
  expect(before.merchant).toMatchObject({ merchant_id: merchantId, ...MERCHANT_VIEW });
  expect(before.listed).toEqual(before.merchant);
  expect(before.audit).toMatchObject({ application_id: applicationId, status: 'auditing' });
  expect(before.submitData).toEqual(SANDBOX_SUBMIT_DATA);
  expect(before.answer).toEqual(LEGACY_ANSWER);

  const out = await durapay({ DURAPAY_PAYLOAD_KEYS: stack.payloadKeys.env }, 'migrate');
  expect(out).toContain('applicant data: sealed 1 merchant(s) and 1 application(s) with payload key seal-a');

  expectNoSecret(await merchantRowText(merchantId));
  expectNoSecret(await applicationRowText(applicationId));
  expect(await reads()).toEqual(before);

  // The submit activity reads the sealed submit_data and hands the channel the object.
  await createActivities(stack.activityDeps).submitMerchantApplication({ applicationId });
  const [atChannel] = await query<{ submit_data: unknown }>(
    'SELECT submit_data FROM sandbox_applications WHERE application_id = :applicationId',
    { applicationId },
  );
  expect(atChannel!.submit_data).toEqual(SANDBOX_SUBMIT_DATA);

  expect(await sealLegacyApplicantData(stack.database.db, stack.payloadKeys.keyring)).toEqual({
    merchants: 0,
    applications: 0,
  });
});

test('when two re-sealing runs race while the API writes merchants, then every legacy row is sealed exactly once and reads as it was written', async () => {
  const other = await stack.createApp(['merchants'], 'legacy-many');
  const legacy = Array.from({ length: 300 }, (_, i) => ({
    merchantId: `legacy-${String(i).padStart(3, '0')}`,
    legalPerson: `Person ${i}`,
    bankAccount: `62220202${String(i).padStart(8, '0')}`,
  }));
  await stack.database.db.sequelize.query(
    `INSERT INTO merchants (app_id, merchant_id, merchant_name, legal_person, bank_account, status, created_at, updated_at)
     VALUES ${legacy.map((_, i) => `(:appId, :m${i}, 'Shop', :p${i}, :b${i}, 'created', now(), now())`).join(', ')}`,
    {
      replacements: {
        appId: other.app_id,
        ...Object.fromEntries(
          legacy.flatMap((m, i) => [
            [`m${i}`, m.merchantId],
            [`p${i}`, m.legalPerson],
            [`b${i}`, m.bankAccount],
          ]),
        ),
      },
    },
  );

  const written = Array.from({ length: 20 }, (_, i) => ({
    merchantId: `fresh-${i}`,
    legalPerson: `Fresh ${i}`,
    bankAccount: `62220303${String(i).padStart(8, '0')}`,
  }));
  const [first, second] = await Promise.all([
    sealLegacyApplicantData(stack.database.db, stack.payloadKeys.keyring, { batchSize: 7 }),
    sealLegacyApplicantData(stack.database.db, stack.payloadKeys.keyring, { batchSize: 7 }),
    ...written.map(async (m) => {
      const res = await signedFetch(stack.baseUrl, other, 'POST', '/api/v1/merchant', {
        json: {
          merchant_id: m.merchantId,
          merchant_name: 'Shop',
          legal_person: m.legalPerson,
          bank_account: m.bankAccount,
        },
      });
      expect((await envelope(res)).code).toBe('success');
    }),
  ]);
  expect(first!.merchants + second!.merchants).toBe(300);
  expect(first!.applications + second!.applications).toBe(0);

  const [plain] = await query<{ n: string }>(
    `SELECT count(*) AS n FROM merchants
      WHERE NOT starts_with(legal_person, 'dpf1:seal-a:') OR NOT starts_with(bank_account, 'dpf1:seal-a:')`,
  );
  expect(Number(plain!.n)).toBe(0);
  const stored = await new MerchantRepository(stack.database.db, stack.payloadKeys.keyring).list(
    other.app_id,
    {},
    { limit: 1000, offset: 0 },
  );
  expect(
    stored
      .map((m) => ({ merchantId: m.merchantId, legalPerson: m.legalPerson, bankAccount: m.bankAccount }))
      .sort((a, b) => a.merchantId.localeCompare(b.merchantId)),
  ).toEqual([...written, ...legacy].sort((a, b) => a.merchantId.localeCompare(b.merchantId)));
});

test('when a sealed bank account is copied into another merchant’s row, then it does not open there', async () => {
  const source = await createMerchant({ bank_account: '6222020200112233' });
  const target = await createMerchant({ bank_account: '6222000000009999' });
  await stack.database.db.sequelize.query(
    `UPDATE merchants SET bank_account = (SELECT bank_account FROM merchants WHERE app_id = :appId AND merchant_id = :source)
      WHERE app_id = :appId AND merchant_id = :target`,
    { replacements: { appId: app.app_id, source, target } },
  );
  const res = await call('GET', `/api/v1/merchant/${target}`);
  expect(res).toMatchObject({ status: 500, code: 'database_error', message: 'could not read the merchant' });
  expect((await call('GET', `/api/v1/merchant/${source}`)).data).toMatchObject({
    bank_account: '************2233',
  });
  await stack.database.db.sequelize.query(
    'DELETE FROM merchants WHERE app_id = :appId AND merchant_id = :target',
    {
      replacements: { appId: app.app_id, target },
    },
  );
});

test('when a new key is put first and durapay keys reseal --rotate runs, then every value an older key sealed is sealed again with it and reads the same', async () => {
  const merchantId = await createMerchant({ legal_person: 'Han Meimei', bank_account: '6222020200112233' });
  const before = (await call('GET', `/api/v1/merchant/${merchantId}`)).data;
  const rotated = `${KEY_B},${KEY_A}`;
  const [counts] = await query<{ merchants: string; applications: string }>(
    `SELECT (SELECT count(*) FROM merchants WHERE legal_person IS NOT NULL OR bank_account IS NOT NULL) AS merchants,
            (SELECT count(*) FROM merchant_applications
              WHERE submit_data IS NOT NULL OR channel_last_answer IS NOT NULL) AS applications`,
  );

  // Without --rotate, values the older key sealed are left as they are.
  expect(await durapay({ DURAPAY_PAYLOAD_KEYS: rotated }, 'keys', 'reseal')).toContain(
    'applicant data: nothing to seal',
  );
  const out = await durapay({ DURAPAY_PAYLOAD_KEYS: rotated }, 'keys', 'reseal', '--rotate');
  expect(out).toContain(
    `applicant data: sealed ${counts!.merchants} merchant(s) and ${counts!.applications} application(s) with payload key seal-b`,
  );
  const [left] = await query<{ n: string }>(
    `SELECT (SELECT count(*) FROM merchants
              WHERE NOT starts_with(legal_person, 'dpf1:seal-b:') OR NOT starts_with(bank_account, 'dpf1:seal-b:'))
          + (SELECT count(*) FROM merchant_applications
              WHERE NOT starts_with(submit_data, 'dpf1:seal-b:') OR NOT starts_with(channel_last_answer, 'dpf1:seal-b:')) AS n`,
  );
  expect(Number(left!.n)).toBe(0);

  // The stack's API (seal-a first, seal-b listed) and an API given only the new key read the same.
  expect((await call('GET', `/api/v1/merchant/${merchantId}`)).data).toEqual(before);
  const api = await serveApi(stack, { payloadKeys: parsePayloadKeys(KEY_B, 'the new key') });
  try {
    expect((await call('GET', `/api/v1/merchant/${merchantId}`, undefined, api.baseUrl)).data).toEqual(
      before,
    );
  } finally {
    await api.close();
  }

  expect(await durapay({ DURAPAY_PAYLOAD_KEYS: rotated }, 'keys', 'reseal', '--rotate')).toContain(
    'applicant data: nothing to seal',
  );
});

test('when applicant data was written, opened and re-sealed, then no log line holds it, sealed or opened', () => {
  const gateway = stack.logs().filter((line) => !/"component":"(sandbox|wechatpay-sandbox)"/.test(line));
  expect(gateway.length).toBeGreaterThan(0);
  for (const line of gateway) {
    expectNoSecret(line);
    expect(line).not.toContain('dpf1:');
  }
});
