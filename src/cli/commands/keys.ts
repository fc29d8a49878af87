import { ConfigError } from '../../platform/config';
import { resolvePayloadKeys } from '../../platform/crypto/keyring';
import { retirePayloadKey } from '../../platform/crypto/key-registry';
import { applicantDataSealedWith, describeSealed, sealLegacyApplicantData } from '../applicant-data';
import { boot } from '../boot';
import { resealSavedStates, savedStatesSealedWith } from '../../modules/orders';
import { resealTransferPayees, transferPayeesSealedWith } from '../../modules/transfers';
import { OperatorRepository } from '../../modules/operators';
import { complaintsSealedWith, resealComplaints } from '../../modules/complaints';
import { fail } from '../config';
import { withDatabase } from '../database';

/** The configuration and its payload keys; a bad key list ends the command with its reason. */
function bootWithKeys() {
  const booted = boot('cli');
  try {
    return { ...booted, keyring: resolvePayloadKeys(booted.config) };
  } catch (err) {
    return fail(err);
  }
}

/** `durapay keys retire`. */
export async function retire(keyId: string): Promise<void> {
  const { config, logger, keyring } = bootWithKeys();
  const retired = await withDatabase(config, logger, async (db) => {
    // Histories cannot be counted from here (docs/security.md, "Payload keys", says when they no longer
    // need a key); rows can, and a key that still opens some is not retired.
    const rows = await applicantDataSealedWith(db, keyId);
    if (rows > 0) {
      throw new ConfigError(
        `payload key ${keyId} still opens applicant data in ${rows} row(s): run \`durapay keys reseal --rotate\` first`,
      );
    }
    const states = await savedStatesSealedWith(db, keyId);
    if (states > 0) {
      throw new ConfigError(
        `payload key ${keyId} still opens the saved state of ${states} order(s): run \`durapay keys reseal --rotate\` first`,
      );
    }
    const payees = await transferPayeesSealedWith(db, keyId);
    if (payees > 0) {
      throw new ConfigError(
        `payload key ${keyId} still opens the payee of ${payees} transfer(s): run \`durapay keys reseal --rotate\` first`,
      );
    }
    const complaints = await complaintsSealedWith(db, keyId);
    if (complaints > 0) {
      throw new ConfigError(
        `payload key ${keyId} still opens the payer's data of ${complaints} complaint(s): run \`durapay keys reseal --rotate\` first`,
      );
    }
    const totp = await new OperatorRepository(db, keyring).totpSecretsSealedWith(keyId);
    if (totp > 0) {
      throw new ConfigError(
        `payload key ${keyId} still opens the TOTP secret of ${totp} operator(s): run \`durapay keys reseal --rotate\` first`,
      );
    }
    return retirePayloadKey(db, keyId, keyring.current.id);
  }).catch(fail);
  console.error(
    retired
      ? `payload key ${keyId} retired: processes may now start without it`
      : `payload key ${keyId} has sealed nothing here, or was retired already`,
  );
}

/** `durapay keys reseal`. */
export async function reseal(opts: { rotate?: boolean }): Promise<void> {
  const { config, logger, keyring } = bootWithKeys();
  const rotate = opts.rotate === true;
  const { sealed, states, payees, totp, complaints } = await withDatabase(config, logger, async (db) => ({
    sealed: await sealLegacyApplicantData(db, keyring, { rotate }),
    // Orders' saved states and transfers' payees are sealed from the start: only a rotation has
    // anything to do.
    states: rotate ? await resealSavedStates(db, keyring) : null,
    payees: rotate ? await resealTransferPayees(db, keyring) : null,
    totp: rotate ? await new OperatorRepository(db, keyring).resealTotpSecrets() : null,
    complaints: rotate ? await resealComplaints(db, keyring) : null,
  })).catch(fail);
  if (complaints) {
    console.error(`complaints: sealed ${complaints.resealed} again with payload key ${keyring.current.id}`);
    for (const { complaintId, reason } of complaints.unopened) {
      console.error(
        `complaints: complaint ${complaintId}'s payer data does not open, left as it is: ${reason}`,
      );
    }
  }
  if (totp) {
    console.error(
      `operators' TOTP secrets: sealed ${totp.resealed} again with payload key ${keyring.current.id}`,
    );
    for (const { operatorId, reason } of totp.unopened) {
      console.error(
        `operators' TOTP secrets: operator ${operatorId}'s does not open, left as it is: ${reason}`,
      );
    }
  }
  console.error(describeSealed(sealed, keyring.current.id));
  if (payees) {
    console.error(
      `transfers' payees: sealed ${payees.resealed} again with payload key ${keyring.current.id}`,
    );
    for (const { transferNo, reason } of payees.unopened) {
      console.error(`transfers' payees: transfer ${transferNo}'s does not open, left as it is: ${reason}`);
    }
  }
  if (!states) return;
  console.error(
    `orders' saved states: sealed ${states.resealed} again with payload key ${keyring.current.id}`,
  );
  for (const { tradeNo, reason } of states.unopened) {
    console.error(`orders' saved states: order ${tradeNo}'s does not open, left as it is: ${reason}`);
  }
}
