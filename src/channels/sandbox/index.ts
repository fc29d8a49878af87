// Longer than 300 lines: the adapter for every port the sandbox offers, its transport and its
// configuration in the one file the registry line names; wire types and parsing are in
// transformers.ts, signing in signature.ts.
import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import type { PayMethod } from '../../modules/orders/rules';
import { ChannelError } from '../errors';
import { qrImage } from '../../platform/qr';
import type {
  ApplicationState,
  CallbackCheck,
  CallbackReply,
  CallbackRequest,
  CallbacksPort,
  Channel,
  ChannelCapabilities,
  ChannelEvent,
  OnboardingPort,
  PaymentState,
  PaymentsPort,
  ProfitSharingPort,
  RefundsPort,
} from '../ports';
import { referenceOf, type ChannelCoreConfig, type ChannelDescriptor, type ChannelFactory } from '../ports';
import { SANDBOX_SIGNATURE_HEADER, signSandboxPayload, verifySandboxSignature } from './signature';
import {
  parseApplicationState,
  parseCallbackEvent,
  parseErrorBody,
  parseFileUploaded,
  parseJson,
  parseOrderCreated,
  parsePaymentState,
  parseProfitShareState,
  parseRefundState,
  parseShareReturnState,
  parseUnfreezeState,
  toWireApplyAbnormal,
  toWireCreateOrder,
  toWireCreateRefund,
  toWireProfitShare,
  toWireShareReturn,
  toWireSubmitApplication,
  toWireUploadFile,
  type WireUnfreezeRequest,
} from './transformers';

export interface SandboxChannelOptions {
  /** Where the simulator's router is mounted, e.g. http://127.0.0.1:8080/sandbox. */
  baseUrl: string;
  secret: string;
  /** Deadline of one call, connection included. */
  timeoutMs: number;
  /** A lower per-order limit than 10^12, to rehearse a real channel's limit (SANDBOX_MAX_AMOUNT). */
  maxAmount?: number;
}

const UPLOAD_TIMEOUT_MS = 60_000;

/** Every pay method durapay knows: the simulator takes them all. */
export const SANDBOX_PAY_METHODS: readonly PayMethod[] = [
  'qr_code',
  'jsapi',
  'mini_program',
  'app',
  'h5',
  'web',
];

export const SANDBOX_CAPABILITIES: ChannelCapabilities = {
  payMethods: SANDBOX_PAY_METHODS,
  maxAmount: 10 ** 12,
  currency: 'CNY',
};

const SANDBOX_FILE_ID = /^sbx_file_[a-z2-7]{24}$/;

/** Receiver types whose share the simulator never takes back (a person's wallet, as at WeChat Pay). */
export const SANDBOX_PERSONAL_RECEIVERS: readonly string[] = ['PERSONAL_OPENID', 'PERSONAL_SUB_OPENID'];

interface Answer {
  status: number;
  text: string;
}

const TIMEOUT_CODES = new Set<unknown>([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

// Duck-typed: socket errors come from node's realm, which under jest is not this module's.
function errorCode(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

function describe(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { code, message, errors } = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  if (Array.isArray(errors) && errors.length > 0) return errors.map(describe).join('; ');
  return typeof message === 'string' && message !== '' ? message : 'request failed';
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}

/**
 * The adapter: talks to the sandbox simulator over HTTP exactly as it would to a real upstream,
 * signing every request with Sandbox-Signature. HTTP 4xx is a refusal (with the simulator's own
 * text), 5xx or a failed connection is "unreachable", no answer within timeoutMs is "timeout".
 */
export class SandboxChannel implements Channel {
  readonly code = 'sandbox';
  readonly capabilities: ChannelCapabilities;
  private readonly baseUrl: string;
  private readonly agent: Agent;

  constructor(private readonly options: SandboxChannelOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`sandbox base URL must be http or https, not ${url.protocol}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.capabilities = {
      ...SANDBOX_CAPABILITIES,
      maxAmount: options.maxAmount ?? SANDBOX_CAPABILITIES.maxAmount,
    };
    this.agent = new Agent({
      connect: { timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  // The simulator has one merchant and no sub-merchants of its own: the context's account and
  // sub-merchant only travel on the create (as the order's sub_merchant_no), as they always have.
  readonly payments: PaymentsPort = {
    create: async (ctx, input) => {
      const answer = await this.call('POST', '/v1/orders', toWireCreateOrder(ctx, input));
      const created = parseOrderCreated(this.ok('create order', answer));
      if (input.payMethod !== 'qr_code') return created;
      // The buyer scans the QR code: the credential carries it rendered, as real channels' do.
      const qr = String(created.payCredential.qr_code);
      return { ...created, payCredential: { ...created.payCredential, qr_image: await qrImage(qr) } };
    },
    query: async (_ctx, tradeNo) => {
      const answer = await this.call('GET', `/v1/orders/${encodeURIComponent(tradeNo)}`);
      return this.paymentState('query order', answer);
    },
    close: async (_ctx, tradeNo) => {
      const answer = await this.call('POST', `/v1/orders/${encodeURIComponent(tradeNo)}/close`, {});
      return this.paymentState('close order', answer);
    },
  };

  readonly refunds: RefundsPort = {
    refund: async (_ctx, input) => {
      const answer = await this.call('POST', '/v1/refunds', toWireCreateRefund(input));
      return parseRefundState(this.ok('create refund', answer));
    },
    query: async (_ctx, { refundNo }) => {
      const answer = await this.call('GET', `/v1/refunds/${encodeURIComponent(refundNo)}`);
      if (this.isUnknown(answer, 'refund_not_found')) return { status: 'not_found' };
      return parseRefundState(this.ok('query refund', answer));
    },
    // A refund steered `abnormal` ([sandbox:abnormal]) is paid to a bank card instead, as at WeChat Pay.
    applyAbnormal: async (_ctx, input) => {
      const answer = await this.call(
        'POST',
        `/v1/refunds/${encodeURIComponent(input.refundNo)}/apply-abnormal`,
        toWireApplyAbnormal(input),
      );
      return parseRefundState(this.ok('apply abnormal refund', answer));
    },
  };

  /**
   * Shares to any account: no receivers to register. It names the payment by trade_no. A share
   * is taken back receiver by receiver before a refund, as at WeChat Pay, and never from a
   * person's wallet.
   */
  readonly profitSharing: ProfitSharingPort = {
    share: async (_ctx, input) => {
      const answer = await this.call('POST', '/v1/profit-shares', toWireProfitShare(input));
      return parseProfitShareState(this.ok('profit share', answer));
    },
    unfreeze: async (_ctx, input) => {
      const body: WireUnfreezeRequest = {
        unfreeze_no: input.unfreezeNo,
        trade_no: input.tradeNo,
        description: input.description,
      };
      const answer = await this.call('POST', '/v1/unfreezes', body);
      return parseUnfreezeState(this.ok('unfreeze', answer));
    },
    returns: 'separate',
    returnable: (receiver) => !SANDBOX_PERSONAL_RECEIVERS.includes(receiver.type.toUpperCase()),
    returnShare: async (_ctx, input) => {
      const answer = await this.call('POST', '/v1/share-returns', toWireShareReturn(input));
      // The simulator's no to this return (a person's wallet, more than is left, a refusing
      // receiver): the return failed. A malformed request (400) stays an error.
      if (answer.status === 422 || this.isUnknown(answer, 'share_not_found')) {
        return { status: 'failed', reason: parseErrorBody(answer.status, answer.text).error };
      }
      return parseShareReturnState(this.ok('share return', answer));
    },
    queryReturn: async (_ctx, { returnNo }) => {
      const answer = await this.call('GET', `/v1/share-returns/${encodeURIComponent(returnNo)}`);
      if (this.isUnknown(answer, 'return_not_found')) return { status: 'not_found' };
      return parseShareReturnState(this.ok('query share return', answer));
    },
  };

  readonly onboarding: OnboardingPort = {
    fileIdPattern: SANDBOX_FILE_ID,
    uploadFile: async (_ctx, input) => {
      // Up to 5 MiB travels (as base64): allow it more than a payment call's deadline.
      const answer = await this.call(
        'POST',
        '/v1/files',
        toWireUploadFile(input),
        Math.max(this.options.timeoutMs, UPLOAD_TIMEOUT_MS),
      );
      return parseFileUploaded(this.ok('upload file', answer));
    },
    submit: async (_ctx, input): Promise<ApplicationState> => {
      const answer = await this.call('POST', '/v1/applications', toWireSubmitApplication(input));
      return parseApplicationState(this.ok('submit application', answer));
    },
    query: async (_ctx, applicationId): Promise<ApplicationState> => {
      const answer = await this.call('GET', `/v1/applications/${encodeURIComponent(applicationId)}`);
      return parseApplicationState(this.ok('query application', answer));
    },
  };

  readonly callbacks: CallbacksPort = {
    verify: (req: CallbackRequest): Promise<CallbackCheck> => {
      const check = verifySandboxSignature(
        this.options.secret,
        headerValue(req.headers, SANDBOX_SIGNATURE_HEADER),
        req.rawBody,
      );
      return Promise.resolve(check.ok ? { ok: true } : check);
    },
    decode: async (req: CallbackRequest): Promise<ChannelEvent> =>
      parseCallbackEvent(parseJson('callback', req.rawBody.toString('utf8'))),
    identify: referenceOf,
    // The simulator, like the seed's channels, reads only the body: `success`, or anything else.
    reply: (outcome): CallbackReply => ({
      status: 200,
      contentType: 'text/plain',
      body: outcome.ok ? 'success' : 'fail',
    }),
  };

  /** Ends the pooled connections (for tests and shutdown); the channel is unusable afterwards. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private paymentState(what: string, answer: Answer): PaymentState {
    if (this.isUnknown(answer, 'order_not_found')) return { status: 'not_found' };
    return parsePaymentState(this.ok(what, answer));
  }

  /** A 404 about the object itself, not about a wrong base URL (which answers without our code). */
  private isUnknown(answer: Answer, code: string): boolean {
    return answer.status === 404 && parseErrorBody(answer.status, answer.text).code === code;
  }

  private ok(what: string, answer: Answer): unknown {
    if (answer.status >= 200 && answer.status < 300) return parseJson(`${what} answer`, answer.text);
    const { error } = parseErrorBody(answer.status, answer.text);
    if (answer.status >= 400 && answer.status < 500) throw new ChannelError('refused', error);
    throw new ChannelError('unreachable', `sandbox could not ${what}: ${error}`);
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    timeoutMs = this.options.timeoutMs,
  ): Promise<Answer> {
    const payload = body === undefined ? '' : JSON.stringify(body);
    const headers: Record<string, string> = {
      accept: 'application/json',
      [SANDBOX_SIGNATURE_HEADER]: signSandboxPayload(this.options.secret, payload),
    };
    if (body !== undefined) headers['content-type'] = 'application/json';

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const res = await request(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : payload,
        dispatcher: this.agent,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      if (timedOut || TIMEOUT_CODES.has(errorCode(err))) {
        throw new ChannelError(
          'timeout',
          `sandbox gave no answer to ${method} ${path} within ${timeoutMs} ms`,
        );
      }
      throw new ChannelError('unreachable', `sandbox unreachable at ${this.baseUrl}: ${describe(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The sandbox's shared secret: configured, or derived from the master key so every process agrees. */
export function sandboxSecret(config: ChannelCoreConfig, masterKey: Buffer): string {
  return (
    config.sandbox.secret ?? createHmac('sha256', masterKey).update('durapay sandbox channel').digest('hex')
  );
}

/** The sandbox's adapters, one per named account (each a simulator, or one with another secret). */
export function sandboxChannelFactory(accounts: Record<string, SandboxChannelOptions>): ChannelFactory {
  return {
    code: 'sandbox',
    accounts: Object.keys(accounts),
    create: (account) => new SandboxChannel(accounts[account]!),
  };
}

/** The sandbox: its settings are core ones (SANDBOX_*), which the development hook reads too. */
export const sandboxChannel: ChannelDescriptor<'sandbox'> = {
  code: 'sandbox',
  label: 'Sandbox',
  /** The configured sandbox (one account, `default`), or undefined when it is disabled. */
  fromConfig(config, _settings, masterKey) {
    if (!config.sandbox.enabled) return undefined;
    return sandboxChannelFactory({
      default: {
        baseUrl: config.sandbox.baseUrl,
        secret: sandboxSecret(config, masterKey),
        // Leaves room inside the request deadline for the workflow around the call.
        timeoutMs: Math.max(1_000, config.api.requestTimeoutMs - 2_000),
        maxAmount: config.sandbox.maxAmount,
      },
    });
  },
};
