import { isoOrNull } from '../../platform/dates';
import type { Transfer } from './repository';

/**
 * The transfer as GET /api/v1/transfer/query/{transferNo} shows it (SPEC §11), and as its
 * notifications carry it. The payee's account is masked and its name never shown.
 * `pay_credential` is there while the payee has to confirm (WeChat Pay: `package_info` for
 * `wx.requestMerchantTransfer`).
 */
export function transferView(t: Transfer) {
  return {
    transfer_no: t.transferNo,
    merchant_transfer_no: t.merchantTransferNo,
    channel_code: t.channelCode,
    merchant_id: t.merchantId,
    amount: Number(t.amount),
    currency: t.currency,
    payee: { type: t.payeeType, account: t.payeeHint },
    remark: t.remark,
    status: t.status,
    pay_credential:
      t.status === 'wait_user_confirm' && t.packageInfo ? { package_info: t.packageInfo } : null,
    channel_transfer_no: t.channelTransferNo,
    fail_reason: t.failReason,
    created_at: isoOrNull(t.createdAt),
    finished_at: isoOrNull(t.finishedAt),
  };
}

export type TransferView = ReturnType<typeof transferView>;
