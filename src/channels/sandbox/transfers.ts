/**
 * The sandbox's transfers port (SPEC §11): payouts to a person's wallet, their query and cancel.
 * An `openid` payee confirms on the simulator's confirmation page (its `package_info`) before the
 * money leaves, as at WeChat Pay; the other payees are paid without it.
 */
import type { PayeeKindDeclaration, TransferInput, TransfersPort } from '../ports';
import type { SandboxClient } from './client';
import { parseTransferState, toWireCreateTransfer } from './transformers';

/** The payees of WeChat Pay and Alipay: the simulator pays them all. */
export const SANDBOX_PAYEES = [
  {
    type: 'openid',
    description: "a WeChat user's openid (the simulator's confirmation page stands in for WeChat).",
  },
  { type: 'alipay_user_id', description: 'an Alipay user id (2088 and 12 digits).' },
  {
    type: 'alipay_logon_id',
    description: "an Alipay logon id (a phone number or an email), with the holder's `name`.",
  },
] as const satisfies readonly PayeeKindDeclaration[];

export const SANDBOX_PAYEE_TYPES: readonly string[] = SANDBOX_PAYEES.map((p) => p.type);

/** The longest texts the simulator takes, in characters. */
export const SANDBOX_TRANSFER_LIMITS = { account: 128, name: 128, remark: 256 } as const;

const SANDBOX_TRANSFER_MAX_AMOUNT = 10 ** 12;

function textProblem(field: string, value: string, max: number): string | undefined {
  if (value.includes('\u0000')) return `${field}: must not contain U+0000`;
  if (value.length > max) return `${field}: must be at most ${max} characters`;
  return undefined;
}

export function sandboxTransfers(client: SandboxClient): TransfersPort {
  const maxAmount = Math.min(
    client.options.maxAmount ?? SANDBOX_TRANSFER_MAX_AMOUNT,
    SANDBOX_TRANSFER_MAX_AMOUNT,
  );
  const path = (transferNo: string) => `/v1/transfers/${encodeURIComponent(transferNo)}`;

  const port: TransfersPort = {
    minAmount: 1,
    payeeTypes: SANDBOX_PAYEE_TYPES,

    // What the simulator's request schema refuses, said before anything is recorded.
    problemWith: (input: Omit<TransferInput, 'transferNo' | 'callbackUrl'>) => {
      const { amount, payee, remark } = input;
      if (!Number.isSafeInteger(amount) || amount < port.minAmount) {
        return `amount: must be an integer of at least ${port.minAmount}`;
      }
      if (amount > maxAmount) return `amount: must be at most ${maxAmount}`;
      if (!SANDBOX_PAYEE_TYPES.includes(payee.type)) {
        return `payee.type: must be one of ${SANDBOX_PAYEE_TYPES.join(', ')}`;
      }
      if (payee.account === '') return 'payee.account: is required';
      if (remark === '') return 'remark: is required';
      return (
        textProblem('payee.account', payee.account, SANDBOX_TRANSFER_LIMITS.account) ??
        (payee.name === undefined
          ? undefined
          : textProblem('payee.name', payee.name, SANDBOX_TRANSFER_LIMITS.name)) ??
        textProblem('remark', remark, SANDBOX_TRANSFER_LIMITS.remark)
      );
    },

    // A 4xx is a refusal (nothing was paid); no answer or a 5xx leaves the outcome to a query.
    create: async (ctx, input) => {
      const answer = await client.call('POST', '/v1/transfers', toWireCreateTransfer(ctx, input));
      return parseTransferState(client.ok('create transfer', answer), input.transferNo);
    },

    query: async (_ctx, transferNo) => {
      const answer = await client.call('GET', path(transferNo));
      if (client.isUnknown(answer, 'transfer_not_found')) return { status: 'not_found' };
      return parseTransferState(client.ok('query transfer', answer), transferNo);
    },

    // Too late (the money left, or the payee confirmed) is the simulator's 409, a refusal with its reason.
    cancel: async (_ctx, transferNo) => {
      const answer = await client.call('POST', `${path(transferNo)}/cancel`, {});
      if (client.isUnknown(answer, 'transfer_not_found')) return { status: 'not_found' };
      return parseTransferState(client.ok('cancel transfer', answer), transferNo);
    },
  };
  return port;
}
