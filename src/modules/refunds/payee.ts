import { ApplicationFailure } from '@temporalio/common';
import { FieldSealer } from '../../platform/crypto/field-sealer';
import type { Keyring } from '../../platform/crypto/keyring';

/** Who an abnormal refund is paid out to (SPEC §3.5): personal data, never kept or logged. */
export interface AbnormalPayee {
  bankAccount: string | null;
  realName: string | null;
}

/** Binds a sealed payee to its refund: copied into another refund's request, it does not open. */
const context = (refundNo: string) => `refunds.abnormal_payee:${refundNo}`;

/**
 * The payee sealed with the payload keys (FieldSealer), for the workflow update and the activity
 * input that carry it to the channel: Temporal keeps both in the refund's history, where an
 * operator with the codec server would otherwise read them. Undefined when there is nothing to hide.
 */
export function sealAbnormalPayee(
  keyring: Keyring,
  refundNo: string,
  payee: AbnormalPayee,
): string | undefined {
  if (payee.bankAccount === null && payee.realName === null) return undefined;
  return new FieldSealer(keyring).seal(payee, context(refundNo));
}

/**
 * The payee a sealed value holds. One that does not open (sealed for another refund, altered, or
 * with a key no longer configured) fails the payout for good, naming the refund, never the value.
 */
export function openAbnormalPayee(keyring: Keyring, refundNo: string, sealed: string): AbnormalPayee {
  try {
    return new FieldSealer(keyring).open<AbnormalPayee>(sealed, context(refundNo));
  } catch (err) {
    throw ApplicationFailure.nonRetryable(
      `the payee of refund ${refundNo} does not open (${(err as Error).name}): ask for the payout again`,
      'internal_system',
    );
  }
}
