/**
 * Alipay's transfers port (SPEC §11): 单笔无密转账到支付宝账户, `alipay.fund.trans.uni.transfer`
 * (product TRANS_ACCOUNT_NO_PWD, scene DIRECT_TRANSFER), followed by
 * `alipay.fund.trans.common.query` by out_biz_no. The transfer number is Alipay's out_biz_no, which
 * Alipay keeps unique per app: the same create sent again answers the transfer already made.
 * Alipay has no cancel of a transfer, so the port leaves it out.
 *
 * The transfer's wire (its biz_content and the one map of its states) is here rather than in
 * transformers.ts, as onboarding's is in zft.ts: it is read by this port alone.
 */
import { ChannelError } from '../errors';
import type {
  ChannelContext,
  KnownTransferState,
  TransferInput,
  PayeeKindDeclaration,
  TransfersPort,
  TransferState,
} from '../ports';
import { isSmid, safeText, type AlipayClient } from './client';
import { ALIPAY_MAX_AMOUNT_FEN, parseBeijingTime, yuanOf, type Answer } from './transformers';

export const TRANSFER_METHOD = 'alipay.fund.trans.uni.transfer';
export const TRANSFER_QUERY_METHOD = 'alipay.fund.trans.common.query';

/** The product and scene of a transfer to an Alipay account; the query by out_biz_no names both. */
const PRODUCT = { product_code: 'TRANS_ACCOUNT_NO_PWD', biz_scene: 'DIRECT_TRANSFER' } as const;

/** TRANS_ACCOUNT_NO_PWD transfers at least 0.10 yuan (trans_amount in [0.1, 100000000]). */
export const ALIPAY_TRANSFER_MIN_FEN = 10;
/** The longest remark durapay sends. */
export const ALIPAY_TRANSFER_REMARK_MAX = 200;
/** order_title, the line the payee sees in the Alipay bill, is the remark cut to this length. */
const ORDER_TITLE_MAX = 128;

/** Who Alipay's 单笔无密转账 pays: an Alipay user by user id, or by logon id with the holder's name. */
export const ALIPAY_PAYEES = [
  { type: 'alipay_user_id', description: 'an Alipay user id (2088 and 12 digits).' },
  {
    type: 'alipay_logon_id',
    description:
      "an Alipay logon id (a phone number or an email), with the holder's `name`, which Alipay checks.",
  },
] as const satisfies readonly PayeeKindDeclaration[];

const IDENTITY_TYPES = {
  alipay_user_id: 'ALIPAY_USER_ID',
  alipay_logon_id: 'ALIPAY_LOGON_ID',
} as const satisfies Record<(typeof ALIPAY_PAYEES)[number]['type'], string>;

export const ALIPAY_PAYEE_TYPES = ALIPAY_PAYEES.map((p) => p.type);

/** An Alipay user id: 2088 and 12 digits. */
const USER_ID = /^2088\d{12}$/;

/** Characters as people count them (a Chinese character is one), not UTF-16 units. */
const length = (text: string) => [...text].length;

/**
 * Why Alipay would refuse the transfer as asked, naming the field; undefined when nothing is
 * wrong. A logon id (phone or email) is paid only with the holder's name, which Alipay checks.
 */
export function transferProblem(
  input: Omit<TransferInput, 'transferNo' | 'callbackUrl'>,
): string | undefined {
  const { payee, amount, remark } = input;
  if (!Object.hasOwn(IDENTITY_TYPES, payee.type)) {
    return `payee.type: Alipay pays ${ALIPAY_PAYEE_TYPES.join(' or ')}, not ${payee.type}`;
  }
  if (!Number.isSafeInteger(amount) || amount < ALIPAY_TRANSFER_MIN_FEN) {
    return `amount: Alipay transfers at least ${yuanOf(ALIPAY_TRANSFER_MIN_FEN)} yuan (${ALIPAY_TRANSFER_MIN_FEN} fen)`;
  }
  if (amount > ALIPAY_MAX_AMOUNT_FEN) {
    return `amount: Alipay transfers at most ${yuanOf(ALIPAY_MAX_AMOUNT_FEN)} yuan`;
  }
  if (payee.type === 'alipay_user_id' && !USER_ID.test(payee.account)) {
    return 'payee.account: an Alipay user id is 2088 followed by 12 digits';
  }
  if (payee.type === 'alipay_logon_id') {
    if (payee.account.trim() === '') return 'payee.account: is required';
    if (!payee.name?.trim()) return 'payee.name: is required for alipay_logon_id (Alipay checks it)';
  }
  if (length(remark) > ALIPAY_TRANSFER_REMARK_MAX) {
    return `remark: at most ${ALIPAY_TRANSFER_REMARK_MAX} characters for Alipay`;
  }
  return undefined;
}

/** The biz_content of `alipay.fund.trans.uni.transfer`. */
export function toWireTransfer(input: TransferInput) {
  const identityType = Object.hasOwn(IDENTITY_TYPES, input.payee.type)
    ? IDENTITY_TYPES[input.payee.type as keyof typeof IDENTITY_TYPES]
    : undefined;
  if (!identityType) {
    throw new ChannelError('refused', `payee.type: Alipay does not pay ${input.payee.type}`);
  }
  const name = input.payee.name?.trim();
  return {
    out_biz_no: input.transferNo,
    trans_amount: yuanOf(input.amount),
    ...PRODUCT,
    order_title: [...input.remark].slice(0, ORDER_TITLE_MAX).join(''),
    payee_info: {
      identity: input.payee.account,
      identity_type: identityType,
      ...(name ? { name } : {}),
    },
    remark: input.remark,
  };
}

/** The biz_content of `alipay.fund.trans.common.query` for a transfer of durapay's. */
export function toWireTransferQuery(transferNo: string) {
  return { out_biz_no: transferNo, ...PRODUCT };
}

function text(answer: Answer, key: string): string | undefined {
  const value = answer[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Why Alipay says the transfer failed: its error_code and fail_reason, as far as it gives them. */
function failure(answer: Answer): string {
  const code = text(answer, 'error_code');
  const reason = text(answer, 'fail_reason');
  const said = [code, reason && safeText(reason)].filter(Boolean).join(': ');
  return said || 'no reason given';
}

/**
 * The one map of Alipay's transfer statuses (the answer of a create, `trans_date`, and of a
 * query, `pay_date`): SUCCESS is paid; DEALING (and WAIT_PAY) still under way; FAIL failed; REFUND
 * (退票) was paid and came back, so the payee has nothing; CLOSED (订单超时关闭) was closed
 * before any money left, which durapay calls cancelled.
 */
export function transferStateOf(answer: Answer, what: string): KnownTransferState {
  const channelTransferNo = text(answer, 'order_id') ?? null;
  const status = answer.status;
  switch (status) {
    case 'SUCCESS':
      return {
        status: 'success',
        channelTransferNo,
        finishedAt: parseBeijingTime(answer.pay_date) ?? parseBeijingTime(answer.trans_date) ?? new Date(),
      };
    case 'DEALING':
    case 'WAIT_PAY':
      return { status: 'processing', channelTransferNo };
    case 'FAIL':
      return {
        status: 'failed',
        channelTransferNo,
        reason: `Alipay failed the transfer: ${failure(answer)}`,
      };
    case 'REFUND':
      return {
        status: 'failed',
        channelTransferNo,
        reason: `Alipay paid the transfer and it was returned (REFUND): ${failure(answer)}`,
      };
    case 'CLOSED':
      return {
        status: 'cancelled',
        channelTransferNo,
        reason: 'Alipay closed the transfer before any money left (CLOSED)',
      };
    default:
      throw new ChannelError('invalid_response', `Alipay ${what}: unknown status ${String(status)}`);
  }
}

/**
 * A merchant's transfers are paid from its own account, reached with its app_auth_token. A
 * 直付通 secondary merchant (an smid without a token) has no account this app may pay from: the
 * call would pay from the service provider's own balance instead, so it is refused.
 */
function authOfTransfer(client: AlipayClient, ctx: ChannelContext): { app_auth_token?: string } {
  if (!ctx.appAuthToken && ctx.subMerchantNo && isSmid(ctx.subMerchantNo)) {
    throw new ChannelError(
      'refused',
      'Alipay transfers are paid from an account that authorised the app (app_auth_token), not from a secondary merchant (smid)',
    );
  }
  return client.authOf(ctx);
}

/** Another request under the same out_biz_no was taken with other parameters. */
const INCONSISTENT = 'PAYMENT_INFO_INCONSISTENCY';

export function alipayTransfers(client: AlipayClient): TransfersPort {
  const port: TransfersPort = {
    minAmount: ALIPAY_TRANSFER_MIN_FEN,
    payeeTypes: ALIPAY_PAYEE_TYPES,
    problemWith: transferProblem,
    create: async (ctx, input) => {
      const problem = transferProblem(input);
      if (problem) throw new ChannelError('refused', problem);
      const auth = authOfTransfer(client, ctx);
      let answer: Answer | undefined;
      try {
        answer = await client.call('transfer', TRANSFER_METHOD, {
          bizContent: toWireTransfer(input),
          ...auth,
        });
      } catch (err) {
        // Alipay has a transfer under this number already: it is durapay's own (the number is
        // never reused), made by an earlier attempt; its state is the answer.
        if (err instanceof ChannelError && err.kind === 'refused' && err.message.startsWith(INCONSISTENT)) {
          const found = await port.query(ctx, input.transferNo).catch(() => undefined);
          if (found !== undefined && found.status !== 'not_found') return found;
          // Alipay says it has the number but would not say how it stands: unknown, not refused.
          if (found === undefined) {
            throw new ChannelError('unreachable', `${err.message} (and the transfer could not be read back)`);
          }
        }
        throw err;
      }
      if (answer === undefined) {
        throw new ChannelError('invalid_response', 'Alipay answered a transfer with "no such order"');
      }
      return transferStateOf(answer, 'transfer');
    },
    query: async (ctx, transferNo): Promise<TransferState> => {
      const answer = await client.call('query transfer', TRANSFER_QUERY_METHOD, {
        bizContent: toWireTransferQuery(transferNo),
        ...authOfTransfer(client, ctx),
      });
      return answer === undefined ? { status: 'not_found' } : transferStateOf(answer, 'transfer query');
    },
  };
  return port;
}
