/**
 * WeChat Pay's transfers port: 商家转账 (the 2025 API, the payee confirms in WeChat). A merchant
 * with a sub_mchid pays through the partner form (`/v3/fund-app/mch-transfer/partner/transfer-bills`,
 * its sub_mchid in every call); without one, the service provider pays from its own account
 * through the direct form (`/v3/fund-app/mch-transfer/transfer-bills`). Either way `appid` is the
 * configured WECHATPAY_SP_APPID, so the payee's openid must be of that app, and the bill is keyed
 * by durapay's transfer number (`out_bill_no`), which WeChat Pay keeps unique: the same create sent
 * again answers the bill it made, never a second one.
 */
import { Rsa } from 'wechatpay-axios-plugin';
import { ChannelError } from '../errors';
import type {
  PayeeKindDeclaration,
  ChannelContext,
  KnownTransferState,
  TransferInput,
  TransferState,
  TransfersPort,
} from '../ports';
import type { WechatpayClient } from './client';
import { TRANSFER_MIN_AMOUNT_FEN, toWireTransfer, transferProblem, transferStateOf } from './transformers';

/** Who WeChat Pay's 商家转账 pays: a WeChat user by openid. */
export const WECHATPAY_PAYEES = [
  {
    type: 'openid',
    description: "a WeChat user's openid, of the service provider's app (WECHATPAY_SP_APPID).",
  },
] as const satisfies readonly PayeeKindDeclaration[];

/** A bill WeChat Pay does not have: 404 NOT_FOUND (记录不存在). */
const NOT_FOUND = 'NOT_FOUND';

export function wechatpayTransfers(client: WechatpayClient): TransfersPort {
  /** The form a context calls: partner with its sub_mchid, or the service provider's own. */
  const form = (ctx: ChannelContext) =>
    ctx.subMerchantNo
      ? { base: 'v3/fund-app/mch-transfer/partner/transfer-bills', subMchid: ctx.subMerchantNo }
      : { base: 'v3/fund-app/mch-transfer/transfer-bills', subMchid: undefined };
  const billPath = (ctx: ChannelContext, transferNo: string) =>
    `${form(ctx).base}/out-bill-no/${encodeURIComponent(transferNo)}`;

  /** The create itself: the payee's name sealed with WeChat Pay's public key, never logged. */
  async function send(ctx: ChannelContext, input: TransferInput): Promise<KnownTransferState> {
    const sealer = input.payee.name ? await client.keyring.sealer() : undefined;
    const body = toWireTransfer(client.account, form(ctx).subMchid, input, (plain) => {
      if (!sealer)
        throw new ChannelError('refused', 'no WeChat Pay public key to seal the payee’s name with');
      return Rsa.encrypt(plain, sealer.key);
    });
    return transferStateOf(
      await client.call(
        'create transfer',
        'POST',
        form(ctx).base,
        body,
        sealer ? { headers: { 'Wechatpay-Serial': sealer.serial } } : {},
      ),
    );
  }

  const port: TransfersPort = {
    minAmount: TRANSFER_MIN_AMOUNT_FEN,
    payeeTypes: WECHATPAY_PAYEES.map((p) => p.type),
    problemWith: transferProblem,
    create: async (ctx, input) => {
      const problem = transferProblem(input);
      if (problem !== undefined) throw new ChannelError('refused', problem);
      try {
        return await send(ctx, input);
      } catch (err) {
        // No trustworthy answer: WeChat Pay may have made the bill. Ask for it by out_bill_no
        // before saying the outcome is unknown (WeChat Pay: never retry under a new number).
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await port.query(ctx, input.transferNo).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        if (found.status !== 'wait_user_confirm' || found.packageInfo !== '') return found;
        // A query does not repeat package_info; the same create, sent again, answers the bill it
        // made with it.
        return send(ctx, input).catch(() => found);
      }
    },
    query: async (ctx, transferNo): Promise<TransferState> => {
      const { subMchid } = form(ctx);
      const answer = await client.call('query transfer', 'GET', billPath(ctx, transferNo), undefined, {
        ...(subMchid === undefined ? {} : { params: { sub_mchid: subMchid } }),
        notFoundCode: NOT_FOUND,
      });
      return answer === undefined ? { status: 'not_found' } : transferStateOf(answer);
    },
    /**
     * 撤销转账: accepted only before the payee confirms (CANCELING, then CANCELLED with its callback);
     * WeChat Pay refuses it once the money is on its way, and that refusal is thrown as its reason.
     */
    cancel: async (ctx, transferNo) => {
      const { subMchid } = form(ctx);
      try {
        return transferStateOf(
          await client.call(
            'cancel transfer',
            'POST',
            `${billPath(ctx, transferNo)}/cancel`,
            subMchid === undefined ? undefined : { sub_mchid: subMchid },
          ),
        );
      } catch (err) {
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await port.query(ctx, transferNo).catch(() => undefined);
        if (found?.status === 'cancelling' || found?.status === 'cancelled') return found;
        throw err;
      }
    },
  };
  return port;
}
