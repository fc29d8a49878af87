/**
 * The sandbox's auto-debit contracts (SPEC §17), over the simulator's `/v1/contract-signings`,
 * `/v1/contracts/{contract_no}` and `/v1/contract-deductions`: the wire types both ends read,
 * and the port. Like WeChat Pay's 委托代扣, the simulator takes deductions 07:00–22:00 China
 * time, at most one a day per contract, each after a pre-deduction notice of at least its amount
 * sent a day before; its contract notifications are signed with Sandbox-Signature.
 */
import type { ContractEvent, ContractState, ContractsPort } from '../ports';
import { ChannelError } from '../errors';
import type { SandboxClient } from './client';
import { SANDBOX_SIGNATURE_HEADER, verifySandboxSignature } from './signature';
import { parseBarcodeAnswer, parseJson, parseReverseAnswer, WireObject } from './transformers';

/** The simulator's window and notice, in its local (China) day. */
export const SANDBOX_CONTRACT_WINDOW = { startMinute: 7 * 60, endMinute: 22 * 60, utcOffsetMinutes: 480 };
export const SANDBOX_NOTICE_LEAD_MS = 86_400_000;

export interface WireContractSigning {
  contract_no: string;
  subject: string;
  plan: { period: 'day' | 'week' | 'month'; every: number; amount: number };
  notify_url: string;
  return_url?: string;
  sub_merchant_no: string | null;
}

export interface WireContractState {
  contract_no: string;
  contract_id: string | null;
  status: 'signing' | 'active' | 'terminated' | 'expired';
  terminated_by: 'buyer' | 'merchant' | null;
  signed_at: string | null;
  terminated_at: string | null;
}

export interface WireContractDeduction {
  trade_no: string;
  contract_id: string;
  amount: number;
  currency: string;
  subject: string;
  notify_url: string;
  sub_merchant_no: string | null;
}

/** A contract notification: `contract.signed` or `contract.terminated`. */
export interface WireContractNotification {
  event_id: string;
  type: 'contract.signed' | 'contract.terminated';
  contract: WireContractState;
}

export function parseContractState(json: unknown): ContractState {
  const o = WireObject.of('contract state', json);
  const status = o.oneOf('status', ['signing', 'active', 'terminated', 'expired'] as const);
  switch (status) {
    case 'signing':
      return { status };
    case 'active':
      return { status, channelContractId: o.string('contract_id'), signedAt: o.date('signed_at') };
    case 'terminated':
    case 'expired':
      return {
        status: 'terminated',
        channelContractId: o.optionalString('contract_id'),
        by: o.optionalString('terminated_by') === 'buyer' ? 'buyer' : 'merchant',
        at: o.date('terminated_at'),
      };
  }
}

function eventOf(json: unknown): ContractEvent {
  const o = WireObject.of('contract notification', json);
  const type = o.oneOf('type', ['contract.signed', 'contract.terminated'] as const);
  const state = parseContractState(o.object('contract'));
  const contractNo = WireObject.of('contract', o.object('contract')).string('contract_no');
  if (type === 'contract.signed' && state.status === 'active') {
    return { kind: 'signed', contractNo, channelContractId: state.channelContractId, at: state.signedAt };
  }
  if (type === 'contract.terminated' && state.status === 'terminated') {
    return {
      kind: 'terminated',
      contractNo,
      channelContractId: state.channelContractId ?? '',
      by: state.by,
      at: state.at,
    };
  }
  throw new ChannelError('invalid_response', `a ${type} notification with a contract ${state.status}`);
}

export function sandboxContracts(client: SandboxClient): ContractsPort {
  const contractPath = (contractNo: string) => `/v1/contracts/${encodeURIComponent(contractNo)}`;
  return {
    window: SANDBOX_CONTRACT_WINDOW,
    noticeLeadMs: SANDBOX_NOTICE_LEAD_MS,
    signUrl: async (ctx, input) => {
      const body: WireContractSigning = {
        contract_no: input.contractNo,
        subject: input.subject,
        plan: input.plan,
        notify_url: input.notifyUrl,
        ...(input.returnUrl ? { return_url: input.returnUrl } : {}),
        sub_merchant_no: ctx.subMerchantNo ?? null,
      };
      const answer = await client.call('POST', '/v1/contract-signings', body);
      return WireObject.of('contract signing', client.ok('offer a contract', answer)).string('sign_url');
    },
    query: async (_ctx, contractNo) => {
      const answer = await client.call('GET', contractPath(contractNo));
      if (client.isUnknown(answer, 'contract_not_found')) return { status: 'not_found' };
      return parseContractState(client.ok('query a contract', answer));
    },
    notice: async (_ctx, input) => {
      const answer = await client.call('POST', `/v1/contract-notices`, {
        contract_id: input.channelContractId,
        amount: input.amount,
      });
      // 204, as WeChat Pay's notice answers; anything else is read as the simulator's answer.
      if (answer.status !== 204) client.ok('send a pre-deduction notice', answer);
    },
    deduct: async (ctx, input) => {
      const body: WireContractDeduction = {
        trade_no: input.tradeNo,
        contract_id: input.channelContractId,
        amount: input.amount,
        currency: ctx.currency,
        subject: input.subject,
        notify_url: input.callbackUrl,
        sub_merchant_no: ctx.subMerchantNo ?? null,
      };
      const answer = await client.call('POST', '/v1/contract-deductions', body);
      return parseBarcodeAnswer(client.ok('deduct under a contract', answer));
    },
    reverse: async (_ctx, tradeNo) => {
      const answer = await client.call('POST', `/v1/orders/${encodeURIComponent(tradeNo)}/reverse`, {});
      if (client.isUnknown(answer, 'order_not_found'))
        return { status: 'reversed', refunded: false, unseen: true };
      return parseReverseAnswer(client.ok('reverse a deduction', answer));
    },
    terminate: async (_ctx, input) => {
      const answer = await client.call('POST', `${contractPath(input.contractNo)}/terminate`, {
        reason: input.reason,
      });
      if (client.isUnknown(answer, 'contract_not_found')) return;
      client.ok('unsign a contract', answer);
    },
    decodeNotification: (req) => {
      const header = Object.entries(req.headers).find(
        ([k]) => k.toLowerCase() === SANDBOX_SIGNATURE_HEADER,
      )?.[1];
      const check = verifySandboxSignature(client.options.secret, header, req.rawBody);
      if (!check.ok) return Promise.reject(new ChannelError('invalid_response', check.reason));
      return Promise.resolve(eventOf(parseJson('contract notification', req.rawBody.toString('utf8'))));
    },
    reply: (outcome) => ({ status: 200, contentType: 'text/plain', body: outcome.ok ? 'success' : 'fail' }),
  };
}
