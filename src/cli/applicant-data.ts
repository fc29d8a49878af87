import { applicationsSealedWith, sealLegacyApplicationData } from '../modules/applications';
import { merchantsSealedWith, sealLegacyMerchantData } from '../modules/merchants';
import { ensurePayloadKeys } from '../platform/crypto/key-registry';
import type { Keyring } from '../platform/crypto/keyring';
import type { Database } from '../platform/db';

export interface ApplicantDataSealed {
  /** Merchants whose legal person or bank account was sealed now. */
  merchants: number;
  /** Applications whose submit_data or channel's last answer was sealed now. */
  applications: number;
}

/**
 * Seals the applicant data that rows written before it was sealed still hold in plain text
 * (the merchants' legal person and bank account, the applications' submit_data and channel
 * answers) with the current payload key; with `rotate`, also what an older key sealed. Run by
 * `durapay migrate` and `npm start` after the migrations, and by `durapay keys reseal`.
 * Idempotent, in batches, safe beside a running API and worker.
 */
export async function sealLegacyApplicantData(
  db: Database,
  keyring: Keyring,
  options: { rotate?: boolean; batchSize?: number } = {},
): Promise<ApplicantDataSealed> {
  // The current key is about to seal rows: recorded first, and every key that sealed something
  // before must still be listed, or what it sealed could not be opened again.
  await ensurePayloadKeys(db, keyring);
  const merchants = await sealLegacyMerchantData(db, keyring, options);
  const applications = await sealLegacyApplicationData(db, keyring, options);
  return { merchants, applications };
}

/** How many rows still hold applicant data sealed with `keyId`. */
export async function applicantDataSealedWith(db: Database, keyId: string): Promise<number> {
  return (await merchantsSealedWith(db, keyId)) + (await applicationsSealedWith(db, keyId));
}

/** One line for people: what a run sealed. */
export function describeSealed(sealed: ApplicantDataSealed, keyId: string): string {
  if (sealed.merchants === 0 && sealed.applications === 0) return 'applicant data: nothing to seal';
  return (
    `applicant data: sealed ${sealed.merchants} merchant(s) and ${sealed.applications} ` +
    `application(s) with payload key ${keyId}`
  );
}
