// Longer than 400 lines on purpose: one product's whole wire (its v2 calls, the v3 notice, and both
// kinds of v2 notification) over shared time, field and reply readers; split, each half would
// export those readers to the other.
/**
 * WeChat Pay's 委托代扣 (auto-debit contracts, SPEC §17) as a service provider. The product is on
 * API v2 but for its pre-deduction notice:
 * - the buyer signs on the 公众号 sign page `papay/partner/entrustweb` (a GET whose query is
 *   signed with the API v2 key; durapay only builds the URL);
 * - `POST /v3/partner-papay/contracts/{contract_id}/notify` (预扣费通知) tells the buyer of the
 *   coming deduction and its most; a deduction then goes in the next days' 07:00–22:00 (China);
 * - `pay/partner/pappayapply` deducts: SUCCESS only means accepted, the outcome comes by
 *   `pay/partner/paporderquery` (asked here for a few seconds, then followed by the order);
 * - `papay/partner/querycontract` and `papay/partner/deletecontract` (解约);
 * - the contract's changes come as v2 XML (change_type ADD | DELETE), signed with the API v2
 *   key, to the notify_url of the sign page; a deduction's outcome as v2 XML to its order's
 *   callback URL (wechatpayV2Callbacks).
 * WeChat Pay's contract_code is durapay's contract number, its contract_id the channel's id.
 */
import { Transformer } from 'wechatpay-axios-plugin';
import { ChannelError } from '../errors';
import type {
  CallbackCheck,
  CallbackReply,
  CallbackRequest,
  CallbacksPort,
  ChannelContext,
  ChannelEvent,
  ContractEvent,
  ContractState,
  ContractsPort,
  PaymentState,
  ReverseAnswer,
} from '../ports';
import { referenceOf } from '../ports';
import type { WechatpayClient } from './client';
import { V2Refusal, type V2Answer, type WechatpayV2Client } from './v2-client';

/** 07:00–22:00 China time, as WeChat Pay takes deductions after a notice. */
export const WECHATPAY_CONTRACT_WINDOW = { startMinute: 7 * 60, endMinute: 22 * 60, utcOffsetMinutes: 480 };
/** The notice goes a day before its deduction (扣费等待期). */
export const WECHATPAY_NOTICE_LEAD_MS = 86_400_000;

/** WeChat Pay's words for a contract or an order it does not have. */
const CONTRACT_UNKNOWN = new Set(['CONTRACT_NOT_EXIST', 'CONTRACTNOTEXIST']);
const CONTRACT_ENDED = new Set(['CONTRACT_TERMINATED', 'CONTRACT_ALREADY_TERMINATED']);
const ORDER_UNKNOWN = new Set(['ORDERNOTEXIST', 'ORDER_NOT_EXIST']);
/** pappayapply refusals that leave the deduction's fate unknown: asked again under the same number. */
const DEDUCTION_UNKNOWN = new Set(['SYSTEMERROR', 'FREQUENCY_LIMITED', 'ORDER_ACCEPTED']);
/** contract_termination_mode: 2 the buyer in WeChat, 5 the account closed, 7 through WeChat's service. */
const BUYER_TERMINATIONS = new Set(['2', '5', '7']);

const CST_OFFSET_MS = 8 * 3_600_000;

/** `2026-12-07 10:00:00` (China time), as v2 papay writes its times. */
function cstDateTime(text: string | undefined, field: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text ?? '');
  if (!m)
    throw new ChannelError('invalid_response', `WeChat Pay ${field} is not a time: ${text ?? 'absent'}`);
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s) - CST_OFFSET_MS);
}

/** `20261207100000` (China time), as v2 orders write time_end. */
function cstCompact(text: string | undefined, field: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text ?? '');
  if (!m)
    throw new ChannelError('invalid_response', `WeChat Pay ${field} is not a time: ${text ?? 'absent'}`);
  return cstDateTime(`${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${m[6]}`, field);
}

function required(answer: Record<string, unknown>, field: string): string {
  const v = answer[field];
  if (typeof v !== 'string' || v === '') {
    throw new ChannelError('invalid_response', `WeChat Pay answer without ${field}`);
  }
  return v;
}

/** At most `bytes` bytes of UTF-8, cut at a character. */
function cut(text: string, bytes: number): string {
  let out = '';
  for (const ch of text) {
    if (Buffer.byteLength(out + ch, 'utf8') > bytes) break;
    out += ch;
  }
  return out;
}

/** A v2 body as fields (a notification's XML), or ChannelError('invalid_response'). */
export function v2Fields(raw: Buffer, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = Transformer.toObject(raw.toString('utf8'));
  } catch {
    throw new ChannelError('invalid_response', `${what} is not XML`);
  }
  if (typeof parsed !== 'object' || parsed === null) {
    throw new ChannelError('invalid_response', `${what} is not an XML object`);
  }
  return parsed as Record<string, unknown>;
}

/** The contract a querycontract answer or a notification describes. */
function contractStateOf(fields: Record<string, unknown>): ContractState {
  const id = required(fields, 'contract_id');
  if (String(fields.contract_state) === '0') {
    return {
      status: 'active',
      channelContractId: id,
      signedAt: cstDateTime(fields.contract_signed_time as string, 'contract_signed_time'),
    };
  }
  return {
    status: 'terminated',
    channelContractId: id,
    by: BUYER_TERMINATIONS.has(String(fields.contract_termination_mode)) ? 'buyer' : 'merchant',
    at: cstDateTime(fields.contract_terminated_time as string, 'contract_terminated_time'),
  };
}

const XML_SUCCESS =
  '<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>';
/**
 * The reply WeChat Pay's v2 notifications expect: XML return_code SUCCESS; any failure is `fail`,
 * as every callback's failure is (SPEC §4), which is not SUCCESS, so WeChat Pay sends it again.
 * WeChat Pay reads the body; the type is text/plain, as every callback's answer is.
 */
function v2Reply(ok: boolean): CallbackReply {
  return { status: 200, contentType: 'text/plain', body: ok ? XML_SUCCESS : 'fail' };
}

export function wechatpayContracts(
  client: WechatpayClient,
  v2: WechatpayV2Client,
  papay: { planId: string },
): ContractsPort {
  const { spMchid, spAppid } = client.account;
  const partner = (ctx: ChannelContext) => ({
    appid: spAppid,
    mch_id: spMchid,
    sub_mch_id: client.subMchid(ctx),
  });

  /** The deduction as paporderquery has it; undefined when WeChat Pay has no such order. */
  async function deduction(ctx: ChannelContext, tradeNo: string): Promise<V2Answer | undefined> {
    try {
      return await v2.call('query a deduction', 'pay/partner/paporderquery', {
        ...partner(ctx),
        out_trade_no: tradeNo,
      });
    } catch (err) {
      if (err instanceof V2Refusal && ORDER_UNKNOWN.has(err.errCode)) return undefined;
      throw err;
    }
  }

  function paymentOf(answer: V2Answer | undefined, tradeNo: string): PaymentState {
    if (!answer) return { status: 'not_found' };
    if (answer.out_trade_no !== tradeNo) {
      throw new ChannelError(
        'invalid_response',
        `WeChat Pay answered for ${answer.out_trade_no}, not ${tradeNo}`,
      );
    }
    switch (answer.trade_state) {
      case 'SUCCESS':
      case 'REFUND':
        return {
          status: 'paid',
          channelTradeNo: required(answer, 'transaction_id'),
          paidAt: cstCompact(answer.time_end, 'time_end'),
          amount: Number(required(answer, 'total_fee')),
        };
      case 'PAYERROR':
      case 'CLOSED':
      case 'REVOKED':
        return { status: 'closed' };
      default:
        return { status: 'pending' };
    }
  }

  return {
    window: WECHATPAY_CONTRACT_WINDOW,
    noticeLeadMs: WECHATPAY_NOTICE_LEAD_MS,

    signUrl: (ctx, input) => {
      const fields: Record<string, string> = {
        ...partner(ctx),
        plan_id: papay.planId,
        contract_code: input.contractNo,
        // Increasing per request, as WeChat Pay requires; a page asked again is the same contract's.
        request_serial: String(Date.now()),
        contract_display_account: cut(input.subject, 32),
        notify_url: input.notifyUrl,
        version: '1.0',
        timestamp: String(Math.floor(Date.now() / 1000)),
        ...(input.returnUrl ? { return_web: '1' } : {}),
      };
      const query = new URLSearchParams({ ...fields, sign: v2.sign(fields, 'MD5') });
      return Promise.resolve(`${client.options.baseUrl}/papay/partner/entrustweb?${query.toString()}`);
    },

    query: async (ctx, contractNo) => {
      let answer: V2Answer;
      try {
        answer = await v2.call(
          'query a contract',
          'papay/partner/querycontract',
          { ...partner(ctx), plan_id: papay.planId, contract_code: contractNo, version: '1.0' },
          true,
        );
      } catch (err) {
        // WeChat Pay learns of a contract when the buyer signs it: none yet is one being signed.
        if (err instanceof V2Refusal && CONTRACT_UNKNOWN.has(err.errCode)) return { status: 'signing' };
        throw err;
      }
      if (answer.contract_code !== contractNo) {
        throw new ChannelError(
          'invalid_response',
          `WeChat Pay answered for contract ${answer.contract_code}, not ${contractNo}`,
        );
      }
      return contractStateOf(answer);
    },

    notice: async (ctx, input) => {
      await client.call(
        'send a pre-deduction notice',
        'POST',
        `v3/partner-papay/contracts/${encodeURIComponent(input.channelContractId)}/notify`,
        {
          sp_mchid: spMchid,
          sp_appid: spAppid,
          sub_mchid: client.subMchid(ctx),
          estimated_amount: { amount: input.amount, currency: 'CNY' },
        },
      );
    },

    deduct: async (ctx, input) => {
      try {
        await v2.call('deduct under a contract', 'pay/partner/pappayapply', {
          ...partner(ctx),
          body: cut(input.subject, 128),
          out_trade_no: input.tradeNo,
          total_fee: String(input.amount),
          fee_type: 'CNY',
          spbill_create_ip: '127.0.0.1',
          notify_url: input.callbackUrl,
          trade_type: 'PAP',
          contract_id: input.channelContractId,
          sign_type: 'HMAC-SHA256',
        });
      } catch (err) {
        if (!(err instanceof V2Refusal)) throw err;
        // Already paid under this number: the query says so. A system error: not known.
        if (err.errCode === 'ORDERPAID') return { status: 'paying', channelTradeNo: null };
        if (DEDUCTION_UNKNOWN.has(err.errCode)) throw new ChannelError('unreachable', err.message);
        throw err;
      }
      // Accepted: WeChat Pay settles it in moments; asked a few times before the order follows it.
      for (const gap of [300, 700, 1_000, 1_500]) {
        await new Promise((resolve) => setTimeout(resolve, gap));
        const answer = await deduction(ctx, input.tradeNo).catch(() => undefined);
        if (!answer) continue;
        const state = paymentOf(answer, input.tradeNo);
        if (state.status === 'paid') return state;
        if (state.status === 'closed') {
          throw new ChannelError('refused', `${answer.trade_state}: ${answer.trade_state_desc ?? ''}`.trim());
        }
      }
      return { status: 'paying', channelTradeNo: null };
    },

    // A deduction cannot be reversed: one taken stands (the order is paid), one failed or never
    // made is over, one WeChat Pay still works on is asked again.
    reverse: async (ctx, tradeNo): Promise<ReverseAnswer> => {
      const answer = await deduction(ctx, tradeNo);
      const state = paymentOf(answer, tradeNo);
      switch (state.status) {
        case 'not_found':
          return { status: 'reversed', refunded: false, unseen: true };
        case 'closed':
          return { status: 'reversed', refunded: false };
        case 'paid':
          throw new ChannelError('refused', `WeChat Pay took the deduction ${tradeNo}: it stands`);
        default:
          return {
            status: 'retry',
            reason: `WeChat Pay is still taking the deduction (${answer?.trade_state ?? ''})`,
          };
      }
    },

    terminate: async (ctx, input) => {
      try {
        await v2.call(
          'unsign a contract',
          'papay/partner/deletecontract',
          {
            ...partner(ctx),
            plan_id: papay.planId,
            contract_code: input.contractNo,
            ...(input.channelContractId ? { contract_id: input.channelContractId } : {}),
            contract_termination_remark: cut(input.reason || 'cancelled', 100),
            version: '1.0',
          },
          true,
        );
      } catch (err) {
        // Never signed, or unsigned already: nothing is left to end.
        if (
          err instanceof V2Refusal &&
          (CONTRACT_UNKNOWN.has(err.errCode) || CONTRACT_ENDED.has(err.errCode))
        )
          return;
        throw err;
      }
    },

    decodeNotification: (req): Promise<ContractEvent> => {
      try {
        const fields = v2Fields(req.rawBody, 'WeChat Pay contract notification');
        if (!v2.verifies(fields)) {
          throw new ChannelError(
            'invalid_response',
            'WeChat Pay contract notification: the sign does not verify',
          );
        }
        if (fields.mch_id !== spMchid) {
          throw new ChannelError(
            'invalid_response',
            `contract notification for mch_id ${String(fields.mch_id)}, not this account`,
          );
        }
        const contractNo = required(fields, 'contract_code');
        const channelContractId = required(fields, 'contract_id');
        const at = cstDateTime(fields.operate_time as string, 'operate_time');
        if (fields.change_type === 'ADD') {
          return Promise.resolve({ kind: 'signed', contractNo, channelContractId, at });
        }
        if (fields.change_type === 'DELETE') {
          const by = BUYER_TERMINATIONS.has(String(fields.contract_termination_mode)) ? 'buyer' : 'merchant';
          return Promise.resolve({ kind: 'terminated', contractNo, channelContractId, by, at });
        }
        throw new ChannelError(
          'invalid_response',
          `contract notification with change_type ${String(fields.change_type)}`,
        );
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },

    reply: (outcome) => v2Reply(outcome.ok),
  };
}

/**
 * The callbacks of v2 orders (a 委托代扣 deduction's outcome, XML to its order's callback URL):
 * signed with the API v2 key, answered in XML. The v3 callbacks port hands such a request here.
 */
export function wechatpayV2Callbacks(spMchid: string, v2: WechatpayV2Client): CallbacksPort {
  return {
    maxBodyBytes: 64 * 1024,
    verify: (req: CallbackRequest): Promise<CallbackCheck> => {
      try {
        const fields = v2Fields(req.rawBody, 'WeChat Pay notification');
        return Promise.resolve(
          v2.verifies(fields) ? { ok: true } : { ok: false, reason: 'the v2 sign does not verify' },
        );
      } catch (err) {
        return Promise.resolve({ ok: false, reason: err instanceof Error ? err.message : 'unreadable' });
      }
    },
    decode: (req: CallbackRequest): Promise<ChannelEvent> => {
      try {
        const f = v2Fields(req.rawBody, 'WeChat Pay notification');
        if (f.return_code !== 'SUCCESS' || f.result_code !== 'SUCCESS') {
          throw new ChannelError('invalid_response', 'a v2 notification of a payment that did not succeed');
        }
        if (f.mch_id !== spMchid) {
          throw new ChannelError(
            'invalid_response',
            `notification for mch_id ${String(f.mch_id)}, not this account`,
          );
        }
        const transactionId = required(f, 'transaction_id');
        const event: ChannelEvent = {
          kind: 'payment',
          eventId: `v2:${transactionId}`,
          tradeNo: required(f, 'out_trade_no'),
          status: 'paid',
          channelTradeNo: transactionId,
          amount: Number(required(f, 'total_fee')),
          currency: typeof f.fee_type === 'string' && f.fee_type !== '' ? f.fee_type : 'CNY',
          paidAt: cstCompact(f.time_end as string, 'time_end'),
          ...(typeof f.sub_mch_id === 'string' && f.sub_mch_id !== '' ? { subMerchantNo: f.sub_mch_id } : {}),
        };
        return Promise.resolve(event);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
    identify: referenceOf,
    reply: (outcome) => v2Reply(outcome.ok),
  };
}

/** Whether a callback's body is v2 XML rather than a v3 JSON envelope. */
export function isV2Body(raw: Buffer): boolean {
  for (const byte of raw) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    return byte === 0x3c; // '<'
  }
  return false;
}
