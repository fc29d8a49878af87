/**
 * The SDK's types (src/sdk/types.ts) against the OpenAPI document the API serves: types are
 * generated from the document with openapi-typescript, and the TypeScript compiler checks that
 * each SDK method takes what its operation accepts and returns exactly what it answers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { execFileSync } from 'node:child_process';
import { buildOpenApiDocument } from '../../src/api/openapi/document';

jest.setTimeout(120_000);

const ROOT = path.join(__dirname, '..', '..');
const SDK = path.join(ROOT, 'src', 'sdk', 'index');
const CLI = path.join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');

/** Compile-time checks: each line fails to compile when the SDK and the document disagree. */
const CHECKS = `
import type { components } from './openapi';
import type * as sdk from ${JSON.stringify(SDK)};
import type { DurapayClient } from ${JSON.stringify(SDK)};

type S = components['schemas'];
/** Exactly the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** What the SDK sends is accepted by the document. */
type Accepts<Doc, Sent> = [Sent] extends [Doc] ? true : false;
type Answer<M extends keyof DurapayClient> = DurapayClient[M] extends (...a: never[]) => Promise<infer R> ? R : never;
type Input<M extends keyof DurapayClient> = DurapayClient[M] extends (...a: infer P) => unknown ? P : never;

export const answers: { [check: string]: true } = {
  createOrder: null as unknown as Same<Answer<'createOrder'>, S['CreatedOrder']>,
  queryOrder: null as unknown as Same<Answer<'queryOrder'>, S['Order']>,
  refund: null as unknown as Same<Answer<'refund'>, S['RefundResult']>,
  queryRefund: null as unknown as Same<Answer<'queryRefund'>, S['Refund']>,
  createMerchant: null as unknown as Same<Answer<'createMerchant'>, S['CreatedMerchant']>,
  listMerchants: null as unknown as Same<Answer<'listMerchants'>, S['MerchantPage']>,
  getMerchant: null as unknown as Same<Answer<'getMerchant'>, S['Merchant']>,
  uploadMerchantFile: null as unknown as Same<Answer<'uploadMerchantFile'>, S['UploadedFile']>,
  applyMerchant: null as unknown as Same<Answer<'applyMerchant'>, S['CreatedApplication']>,
  getMerchantAudit: null as unknown as Same<Answer<'getMerchantAudit'>, S['Application']>,
  listNotifications: null as unknown as Same<Answer<'listNotifications'>, S['NotificationPage']>,
  resendNotification: null as unknown as Same<Answer<'resendNotification'>, S['ResentNotification']>,
  startReconciliation: null as unknown as Same<Answer<'startReconciliation'>, S['ReconciliationRunList']>,
  listReconciliationRuns: null as unknown as Same<Answer<'listReconciliationRuns'>, S['ReconciliationRunPage']>,
  listReconciliationMismatches: null as unknown as Same<
    Answer<'listReconciliationMismatches'>,
    S['ReconciliationMismatchPage']
  >,
  resolveReconciliationMismatch: null as unknown as Same<
    Answer<'resolveReconciliationMismatch'>,
    S['ReconciliationMismatch']
  >,
  transfer: null as unknown as Same<Answer<'transfer'>, S['Transfer']>,
  queryTransfer: null as unknown as Same<Answer<'queryTransfer'>, S['Transfer']>,
  cancelTransfer: null as unknown as Same<Answer<'cancelTransfer'>, S['Transfer']>,
  listComplaints: null as unknown as Same<Answer<'listComplaints'>, S['ComplaintPage']>,
  getComplaint: null as unknown as Same<Answer<'getComplaint'>, S['Complaint']>,
  replyToComplaint: null as unknown as Same<Answer<'replyToComplaint'>, S['Complaint']>,
  refundComplaint: null as unknown as Same<Answer<'refundComplaint'>, S['ComplaintRefunded']>,
  completeComplaint: null as unknown as Same<Answer<'completeComplaint'>, S['Complaint']>,
  createContract: null as unknown as Same<Answer<'createContract'>, S['OpenedContract']>,
  listContracts: null as unknown as Same<Answer<'listContracts'>, S['ContractPage']>,
  getContract: null as unknown as Same<Answer<'getContract'>, S['Contract']>,
  cancelContract: null as unknown as Same<Answer<'cancelContract'>, S['Contract']>,
  errorCode: null as unknown as Same<sdk.ErrorCode, S['ErrorCode']>,
};

export const requests: { [check: string]: true } = {
  createOrder: null as unknown as Accepts<S['CreateOrderRequest'], Input<'createOrder'>[0]>,
  refund: null as unknown as Accepts<S['RefundRequest'], Input<'refund'>[0]>,
  transfer: null as unknown as Accepts<S['TransferRequest'], Input<'transfer'>[0]>,
  createMerchant: null as unknown as Accepts<S['CreateMerchantRequest'], Input<'createMerchant'>[0]>,
  applyMerchant: null as unknown as Accepts<S['ApplyRequest'], Input<'applyMerchant'>[1]>,
  startReconciliation: null as unknown as Accepts<
    S['StartReconciliationRequest'],
    Input<'startReconciliation'>[0]
  >,
  replyToComplaint: null as unknown as Accepts<S['ComplaintReply'], Input<'replyToComplaint'>[1]>,
  refundComplaint: null as unknown as Accepts<S['ComplaintRefund'], Input<'refundComplaint'>[1]>,
  createContract: null as unknown as Accepts<S['CreateContract'], Input<'createContract'>[0]>,
  resolveReconciliationMismatch: null as unknown as Accepts<
    S['ResolveMismatchRequest'],
    Input<'resolveReconciliationMismatch'>[1]
  >,
  // Every pay method, order status and merchant status the SDK names is one the document names.
  payMethod: null as unknown as Same<sdk.PayMethod, S['Order']['pay_method']>,
  orderStatus: null as unknown as Same<sdk.OrderStatus, S['Order']['status']>,
  merchantStatus: null as unknown as Same<sdk.MerchantStatus, S['Merchant']['status']>,
  applicationStatus: null as unknown as Same<sdk.ApplicationStatus, S['Application']['status']>,
  transferStatus: null as unknown as Same<sdk.TransferStatus, S['Transfer']['status']>,
  contractStatus: null as unknown as Same<sdk.ContractStatus, S['Contract']['status']>,
};
`;

/** The project's own compiler options (tsconfig.json), so the SDK compiles as it does in typecheck. */
function projectOptions(): ts.CompilerOptions {
  const file = path.join(ROOT, 'tsconfig.json');
  const { config } = ts.readConfigFile(file, (f) => ts.sys.readFile(f));
  const { rootDir: _rootDir, ...options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT).options;
  return { ...options, noEmit: true };
}

/** The compiler's complaints about the checks, each with the line's check name. */
function compile(dir: string): string[] {
  const program = ts.createProgram([path.join(dir, 'checks.ts')], projectOptions());
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${path.basename(d.file.fileName)}: ${d.file.text.split('\n')[d.file.getLineAndCharacterOfPosition(d.start).line]!.trim()}`
        : '';
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-sdk-types-'));
  fs.writeFileSync(
    path.join(dir, 'openapi.json'),
    JSON.stringify(buildOpenApiDocument({ version: '0.0.0' })),
  );
  // Its command line: the library's CommonJS build loads ES modules that jest cannot.
  execFileSync(
    process.execPath,
    [
      CLI,
      path.join(dir, 'openapi.json'),
      '--output',
      path.join(dir, 'openapi.ts'),
      '--default-non-nullable',
      'false',
    ],
    {
      stdio: 'pipe',
    },
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test("when the SDK's types are compiled against types generated from the OpenAPI document, then every method's input and answer agree with its operation", () => {
  fs.writeFileSync(path.join(dir, 'checks.ts'), CHECKS);
  expect(compile(dir)).toEqual([]);
});

test('when an SDK answer type differs from the document, then the check does not compile', () => {
  // The check itself can fail: an SDK whose Order lacked a field would be caught.
  const broken = CHECKS.replace(
    "Same<Answer<'queryOrder'>, S['Order']>",
    "Same<Omit<Answer<'queryOrder'>, 'subject'>, S['Order']>",
  );
  expect(broken).not.toBe(CHECKS);
  fs.writeFileSync(path.join(dir, 'checks.ts'), broken);
  expect(compile(dir)).toEqual([
    expect.stringMatching(/^checks\.ts: queryOrder: .*Type 'false' is not assignable to type 'true'/),
  ]);
});
