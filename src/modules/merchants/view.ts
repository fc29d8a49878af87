import { isoOrNull } from '../../platform/dates';
import { maskBankAccount } from './rules';
import type { Merchant } from './model';

/** The merchant as GET /api/v1/merchant[/{id}] shows it (SPEC §5.2): the bank account masked. */
export function merchantView(m: Merchant) {
  return {
    merchant_id: m.merchantId,
    merchant_name: m.merchantName,
    license_no: m.licenseNo,
    legal_person: m.legalPerson,
    bank_account: maskBankAccount(m.bankAccount),
    status: m.status,
    channel_code: m.channelCode,
    sub_merchant_no: m.subMerchantNo,
    profit_sharing: m.profitSharing,
    created_at: isoOrNull(m.createdAt),
    updated_at: isoOrNull(m.updatedAt),
  };
}
