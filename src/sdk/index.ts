// Longer than 400 lines: the client SDK is one file on purpose, a method per endpoint of the
// OpenAPI document (checked by test/unit/sdk-openapi.test.ts), so that what an app imports is one
// flat surface; the signing and the envelope are platform code it only calls.
/**
 * Client SDK for the durapay API: signs every request (SPEC §2) and unwraps the envelope (§1).
 */
import { randomBytes } from 'node:crypto';
import { signRequest } from '../platform/crypto/http-signature';
import type {
  AbnormalRefundInput,
  AbnormalRefundResult,
  ApplyMerchantInput,
  AuthorizationStarted,
  ChannelAccount,
  ChannelAccountFields,
  ChannelAccountList,
  CountedPage,
  ListReconciliationMismatchesParams,
  ListReconciliationRunsParams,
  ReconciliationMismatch,
  ReconciliationRun,
  ResolveMismatchRequest,
  StartReconciliationRequest,
  DetachedChannelAccount,
  StartAuthorizationInput,
  CreateMerchantInput,
  CreateOrderInput,
  CreateOrderResult,
  CreatedApplication,
  CreatedMerchant,
  ListMerchantsParams,
  ListNotificationsParams,
  Merchant,
  MerchantApplication,
  Notification,
  Order,
  Page,
  Refund,
  RefundInput,
  RefundResult,
  ResentNotification,
  Transfer,
  TransferInput,
  PaymentLink,
  PaymentLinkInput,
  ListPaymentLinksParams,
  Complaint,
  ComplaintRefunded,
  ComplaintReplyInput,
  ListComplaintsParams,
  Contract,
  CreateContractInput,
  ListContractsParams,
  OpenedContract,
  UploadedFile,
  UploadMerchantFileInput,
} from './types';

export type * from './types';

export interface DurapayClientOptions {
  /** Where the API is served, e.g. `http://localhost:8080`. */
  baseUrl: string;
  appId: string;
  secret: string;
  /** Per request, including reading the answer; default 15000. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  json?: unknown;
  body?: Buffer;
  headers?: Record<string, string>;
  /** Sent as `X-Request-Id`, which the service echoes and logs. */
  requestId?: string;
}

/** A failure answered by the service, or an answer that was not the service's envelope. */
export class DurapayError extends Error {
  override name = 'DurapayError';

  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus: number,
    readonly requestId: string | undefined,
  ) {
    super(message);
  }
}

interface Envelope {
  code: string;
  message: string;
  data: unknown;
  request_id?: string;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const SNIPPET_CHARS = 200;

export class DurapayClient {
  private readonly baseUrl: string;
  private readonly appId: string;
  private readonly secret: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: DurapayClientOptions) {
    // Fail on a malformed base URL now rather than on the first call.
    new URL(options.baseUrl);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.appId = options.appId;
    this.secret = options.secret;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  async request<T>(method: string, pathWithQuery: string, options: RequestOptions = {}): Promise<T> {
    if (!pathWithQuery.startsWith('/')) throw new TypeError('pathWithQuery must start with "/"');
    if (options.json !== undefined && options.body !== undefined) {
      throw new TypeError('give either json or body, not both');
    }
    const url = new URL(this.baseUrl + pathWithQuery);
    // The URL parser normalizes what fetch puts on the wire (percent-encoding, a bare "?"
    // dropped), so the signature must cover its result, not the string we were given.
    const target = url.pathname + url.search;
    const body =
      options.json !== undefined ? Buffer.from(JSON.stringify(options.json), 'utf8') : options.body;

    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;
    Object.assign(headers, signRequest({ method, target, body, keyId: this.appId, secret: this.secret }));

    const res = await this.fetchFn(url, {
      method,
      headers,
      body,
      // Following a redirect would hand a still-valid signature to wherever it points.
      redirect: 'manual',
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    const envelope = parseEnvelope(text);
    const requestId = envelope?.request_id ?? res.headers.get('x-request-id') ?? undefined;
    if (!envelope) {
      const got = text === '' ? 'an empty body' : JSON.stringify(text.slice(0, SNIPPET_CHARS));
      throw new DurapayError(
        'internal_system',
        `expected a JSON envelope, got HTTP ${res.status} with ${got}`,
        res.status,
        requestId,
      );
    }
    if (envelope.code !== 'success') {
      throw new DurapayError(envelope.code, envelope.message, res.status, requestId);
    }
    return envelope.data as T;
  }

  createOrder(input: CreateOrderInput): Promise<CreateOrderResult> {
    return this.request('POST', '/api/v1/pay/unified-order', { json: input });
  }

  queryOrder(tradeNo: string): Promise<Order> {
    return this.request('GET', `/api/v1/pay/query/${encodeURIComponent(tradeNo)}`);
  }

  closeOrder(tradeNo: string): Promise<null> {
    return this.request('POST', '/api/v1/pay/close', { json: { trade_no: tradeNo } });
  }

  refund(input: RefundInput): Promise<RefundResult> {
    return this.request('POST', '/api/v1/pay/refund', { json: input });
  }

  /** Has an `abnormal` refund paid out another way (§3.5). */
  applyAbnormalRefund(input: AbnormalRefundInput): Promise<AbnormalRefundResult> {
    return this.request('POST', '/api/v1/pay/refund/abnormal', { json: input });
  }

  queryRefund(refundNo: string): Promise<Refund> {
    return this.request('GET', `/api/v1/pay/refund/query/${encodeURIComponent(refundNo)}`);
  }

  /** Pays out to a person's wallet (§11); the same request again answers the same transfer. */
  transfer(input: TransferInput): Promise<Transfer> {
    return this.request('POST', '/api/v1/transfer', { json: input });
  }

  queryTransfer(transferNo: string): Promise<Transfer> {
    return this.request('GET', `/api/v1/transfer/query/${encodeURIComponent(transferNo)}`);
  }

  /** Cancels a transfer its payee has not received yet (§11). */
  cancelTransfer(transferNo: string): Promise<Transfer> {
    return this.request('POST', '/api/v1/transfer/cancel', { json: { transfer_no: transferNo } });
  }

  /** Makes a payment link (§15); the same merchant_link_no and body again answers the same link. */
  createPaymentLink(input: PaymentLinkInput): Promise<PaymentLink & { is_idempotent: boolean }> {
    return this.request('POST', '/api/v1/payment-links', { json: input });
  }

  getPaymentLink(linkId: string): Promise<PaymentLink> {
    return this.request('GET', `/api/v1/payment-links/${encodeURIComponent(linkId)}`);
  }

  listPaymentLinks(
    params: ListPaymentLinksParams = {},
  ): Promise<{ list: PaymentLink[]; total: number; limit: number; offset: number }> {
    return this.request('GET', `/api/v1/payment-links${queryString(params)}`);
  }

  /** Stops a link taking new orders (§15); orders already made go on. */
  deactivatePaymentLink(linkId: string): Promise<PaymentLink> {
    return this.request('POST', `/api/v1/payment-links/${encodeURIComponent(linkId)}/deactivate`, {
      json: {},
    });
  }

  /** The complaints about this app's orders (§16), newest first; pass `next` as `after` for the next page. */
  listComplaints(params: ListComplaintsParams = {}): Promise<{ list: Complaint[]; next: string | null }> {
    return this.request('GET', `/api/v1/complaints${queryString(params)}`);
  }

  getComplaint(complaintId: string): Promise<Complaint> {
    return this.request('GET', `/api/v1/complaints/${encodeURIComponent(complaintId)}`);
  }

  /** Replies to the payer; the same content and images again is the same reply, sent once. */
  replyToComplaint(complaintId: string, input: ComplaintReplyInput): Promise<Complaint> {
    return this.request('POST', `/api/v1/complaints/${encodeURIComponent(complaintId)}/reply`, {
      json: input,
    });
  }

  /** Refunds the complained order through its book, once per complaint. */
  refundComplaint(
    complaintId: string,
    input: { refund_amount: number; reason?: string },
  ): Promise<ComplaintRefunded> {
    return this.request('POST', `/api/v1/complaints/${encodeURIComponent(complaintId)}/refund`, {
      json: input,
    });
  }

  /** Tells the channel the complaint is dealt with (it becomes `processed`). */
  completeComplaint(complaintId: string): Promise<Complaint> {
    return this.request('POST', `/api/v1/complaints/${encodeURIComponent(complaintId)}/complete`, {
      json: {},
    });
  }

  /** Offers a recurring contract (§17): answers where the buyer signs; the same number again is the same contract. */
  createContract(input: CreateContractInput): Promise<OpenedContract> {
    return this.request('POST', '/api/v1/contracts', { json: input });
  }

  /** This app's contracts, newest first; pass `next` as `after` for the next page. */
  listContracts(params: ListContractsParams = {}): Promise<{ list: Contract[]; next: string | null }> {
    return this.request('GET', `/api/v1/contracts${queryString(params)}`);
  }

  getContract(contractNo: string): Promise<Contract> {
    return this.request('GET', `/api/v1/contracts/${encodeURIComponent(contractNo)}`);
  }

  /** Unsigns at the channel and cancels; nothing is deducted after it. */
  cancelContract(contractNo: string, input: { reason?: string } = {}): Promise<Contract> {
    return this.request('POST', `/api/v1/contracts/${encodeURIComponent(contractNo)}/cancel`, {
      json: input,
    });
  }

  createMerchant(input: CreateMerchantInput): Promise<CreatedMerchant> {
    return this.request('POST', '/api/v1/merchant', { json: input });
  }

  listMerchants(params: ListMerchantsParams = {}): Promise<Page<Merchant>> {
    return this.request('GET', `/api/v1/merchant${queryString(params)}`);
  }

  getMerchant(merchantId: string): Promise<Merchant> {
    return this.request('GET', `/api/v1/merchant/${encodeURIComponent(merchantId)}`);
  }

  uploadMerchantFile(input: UploadMerchantFileInput): Promise<UploadedFile> {
    const fields: [string, string][] = [];
    if (input.channelCode !== undefined) fields.push(['channel_code', input.channelCode]);
    fields.push(['file_media_type', input.fileMediaType]);
    const { body, contentType } = multipart(fields, {
      name: 'file',
      fileName: input.fileName,
      contentType: input.fileMediaType,
      content: input.file,
    });
    return this.request('POST', '/api/v1/merchant/upload-file', {
      body,
      headers: { 'content-type': contentType },
    });
  }

  applyMerchant(merchantId: string, input: ApplyMerchantInput): Promise<CreatedApplication> {
    return this.request('POST', `/api/v1/merchant/${encodeURIComponent(merchantId)}/apply`, { json: input });
  }

  getMerchantAudit(merchantId: string): Promise<MerchantApplication> {
    return this.request('GET', `/api/v1/merchant/${encodeURIComponent(merchantId)}/audit`);
  }

  /** §5.8: attaches the merchant's account at a channel, once the channel confirms it. */
  attachChannelAccount(
    merchantId: string,
    channelCode: string,
    fields: ChannelAccountFields,
  ): Promise<ChannelAccount> {
    return this.request('PUT', accountPath(merchantId, channelCode), { json: fields });
  }

  listChannelAccounts(merchantId: string): Promise<ChannelAccountList> {
    return this.request('GET', `/api/v1/merchant/${encodeURIComponent(merchantId)}/channel-accounts`);
  }

  detachChannelAccount(merchantId: string, channelCode: string): Promise<DetachedChannelAccount> {
    return this.request('DELETE', accountPath(merchantId, channelCode));
  }

  /** §5.8: Alipay's authorisation page for the merchant (第三方应用授权). */
  startAlipayAuthorization(
    merchantId: string,
    input: StartAuthorizationInput = {},
  ): Promise<AuthorizationStarted> {
    return this.request('POST', `${accountPath(merchantId, 'alipay')}/authorization`, { json: input });
  }

  listNotifications(params: ListNotificationsParams = {}): Promise<Page<Notification>> {
    return this.request('GET', `/api/v1/notifications${queryString(params)}`);
  }

  resendNotification(notificationId: string): Promise<ResentNotification> {
    // fetch sends `Content-Length: 0` on a body-less POST, so the service may see an empty
    // body; signing it as one satisfies the digest check whichever way the server reads it.
    return this.request('POST', `/api/v1/notifications/${encodeURIComponent(notificationId)}/resend`, {
      body: Buffer.alloc(0),
    });
  }

  /** Starts a day's reconciliation by hand (SPEC §10); follow the runs with listReconciliationRuns. */
  startReconciliation(body: StartReconciliationRequest): Promise<{ list: ReconciliationRun[] }> {
    return this.request('POST', '/api/v1/reconciliation/runs', { json: body });
  }

  listReconciliationRuns(params: ListReconciliationRunsParams = {}): Promise<CountedPage<ReconciliationRun>> {
    return this.request('GET', `/api/v1/reconciliation/runs${queryString(params)}`);
  }

  listReconciliationMismatches(
    runId: string,
    params: ListReconciliationMismatchesParams = {},
  ): Promise<CountedPage<ReconciliationMismatch>> {
    return this.request(
      'GET',
      `/api/v1/reconciliation/runs/${encodeURIComponent(runId)}/mismatches${queryString(params)}`,
    );
  }

  /** Records a person's resolution of a finding; it moves no money. */
  resolveReconciliationMismatch(
    mismatchId: string,
    body: ResolveMismatchRequest,
  ): Promise<ReconciliationMismatch> {
    return this.request(
      'POST',
      `/api/v1/reconciliation/mismatches/${encodeURIComponent(mismatchId)}/resolve`,
      {
        json: body,
      },
    );
  }
}

function parseEnvelope(text: string): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, message, data, request_id } = value as Record<string, unknown>;
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  return { code, message, data, request_id: typeof request_id === 'string' ? request_id : undefined };
}

function queryString(params: object): string {
  const search = new URLSearchParams();
  const entries: [string, unknown][] = Object.entries(params);
  for (const [name, value] of entries) {
    if (value !== undefined) search.append(name, String(value));
  }
  const query = search.toString();
  return query === '' ? '' : `?${query}`;
}

interface FilePart {
  name: string;
  fileName: string;
  contentType: string;
  content: Buffer;
}

/**
 * Builds multipart/form-data (RFC 7578) as one buffer, because the Content-Digest must cover
 * exactly the bytes sent and FormData leaves the boundary and the encoding to fetch.
 */
function multipart(fields: [string, string][], file: FilePart): { body: Buffer; contentType: string } {
  const boundary = `durapay-${randomBytes(16).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of fields) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`,
        'utf8',
      ),
    );
  }
  chunks.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.name)}"; ` +
        `filename="${quote(file.fileName)}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
      'utf8',
    ),
    file.content,
    Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8'),
  );
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const accountPath = (merchantId: string, channelCode: string) =>
  `/api/v1/merchant/${encodeURIComponent(merchantId)}/channel-accounts/${encodeURIComponent(channelCode)}`;

/** The escaping browsers apply to names in Content-Disposition (WHATWG multipart encoding). */
function quote(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
