/**
 * The WeChat Pay sandbox's read of a sub-merchant's settlement account (查询结算账户,
 * `GET /v3/apply4sub/sub_merchants/{sub_mchid}/settlement`), which WeChat Pay answers, account
 * number masked, only to the service provider that onboarded the sub-merchant.
 *
 * Which sub-merchants are this service provider's: every sub_mchid its applyments were issued
 * here; and, since the order APIs take any sub_mchid without asking, every other one too, except
 * those starting with one of `foreignSubMchidPrefixes` (an option of the sandbox; `19999` by
 * default), which stand for another service provider's sub-merchants and are answered
 * 403 NO_AUTH. A sub_mchid that is not a merchant number is 400 PARAM_ERROR.
 */
import type { Response, Router } from 'express';
import type { WechatpayApplymentStore } from './applyment';
import { paramError } from './http';
import { WechatpayError } from './wire';

/** The sub_mchid prefixes that stand for another service provider's sub-merchants by default. */
export const DEFAULT_FOREIGN_SUB_MCHID_PREFIXES: readonly string[] = ['19999'];

export interface SubMerchantRouteDeps {
  applyments: WechatpayApplymentStore;
  /** Sub_mchids starting so are not this service provider's (unless its applyment issued them). */
  foreignSubMchidPrefixes: readonly string[];
  answer(res: Response, status: number, body?: unknown): void;
}

/** As documented: account_type, account_bank, bank_name, bank_branch_id, account_number, verify_*. */
interface SettlementAccount {
  account_type: 'ACCOUNT_TYPE_BUSINESS' | 'ACCOUNT_TYPE_PRIVATE';
  account_bank: string;
  bank_name?: string;
  bank_branch_id?: string;
  account_number: string;
  verify_result: 'VERIFY_SUCCESS' | 'VERIFY_FAIL' | 'VERIFYING';
  verify_fail_reason?: string;
}

/** `6214830000000000001` → `62***************01`, as WeChat Pay masks it. */
function masked(accountNumber: string): string {
  if (accountNumber.length <= 4) return '*'.repeat(accountNumber.length);
  return `${accountNumber.slice(0, 2)}${'*'.repeat(accountNumber.length - 4)}${accountNumber.slice(-2)}`;
}

/** The account an applyment submitted (its sealed fields opened), or a made-up one. */
function settlementOf(bank: Record<string, unknown> | undefined): SettlementAccount {
  const text = (key: string) => (typeof bank?.[key] === 'string' ? (bank[key] as string) : undefined);
  const bankName = text('bank_name');
  const branchId = text('bank_branch_id');
  return {
    account_type:
      text('bank_account_type') === 'BANK_ACCOUNT_TYPE_PERSONAL'
        ? 'ACCOUNT_TYPE_PRIVATE'
        : 'ACCOUNT_TYPE_BUSINESS',
    account_bank: text('account_bank') ?? '招商银行',
    ...(bankName ? { bank_name: bankName } : {}),
    ...(branchId ? { bank_branch_id: branchId } : {}),
    account_number: masked(text('account_number') ?? '6214830000000000001'),
    verify_result: 'VERIFY_SUCCESS',
  };
}

export function subMerchantRoutes(router: Router, deps: SubMerchantRouteDeps): void {
  router.get('/v3/apply4sub/sub_merchants/:sub_mchid/settlement', (req, res) => {
    const spMchid = String(res.locals.mchid);
    const subMchid = req.params.sub_mchid;
    if (!/^\d{1,32}$/.test(subMchid)) throw paramError('sub_mchid is a merchant number (digits)');
    const issued = deps.applyments.bySubMchid(spMchid, subMchid);
    if (!issued && deps.foreignSubMchidPrefixes.some((prefix) => subMchid.startsWith(prefix))) {
      throw new WechatpayError(
        403,
        'NO_AUTH',
        `无权限: sub_mchid ${subMchid} 不是服务商 ${spMchid} 的特约商户 (not a sub-merchant of this service provider)`,
      );
    }
    const bank = issued?.body.bank_account_info as Record<string, unknown> | undefined;
    deps.answer(res, 200, settlementOf(bank));
  });
}
