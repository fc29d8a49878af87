import { isoOrNull } from '../../platform/dates';
import { maskBankAccount } from './rules';
import type { MerchantWithPersonalData } from './repository';
import { accountView, type ChannelAccount } from './accounts';

/** What a channel's onboarding is told of the merchant: its record, the bank account in full. */
export function applicantOf(m: MerchantWithPersonalData) {
  return {
    merchantId: m.merchantId,
    merchantName: m.merchantName,
    licenseNo: m.licenseNo,
    legalPerson: m.legalPerson,
    bankAccount: m.bankAccount,
  };
}

/**
 * The merchant as GET /api/v1/merchant[/{id}] shows it (SPEC §5.2): the bank account masked,
 * its attached channel accounts (§5.8) with tokens masked.
 */
export function merchantView(m: MerchantWithPersonalData, accounts: readonly ChannelAccount[]) {
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
    channel_accounts: accounts.map(accountView),
    created_at: isoOrNull(m.createdAt),
    updated_at: isoOrNull(m.updatedAt),
  };
}
