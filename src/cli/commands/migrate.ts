import { describeDatabaseUrl } from '../../platform/db';
import { migrateUp } from '../../platform/db/migrate';
import { resolvePayloadKeys } from '../../platform/crypto/keyring';
import { migrateSandboxUpstream } from '../../sandbox-hook';
import { describeSealed, sealLegacyApplicantData } from '../applicant-data';
import { boot } from '../boot';
import { fail } from '../config';
import { withDatabase } from '../database';

/** `durapay migrate`. */
export async function migrate(): Promise<void> {
  const { config, logger } = boot('migrate');
  let keyring;
  try {
    keyring = resolvePayloadKeys(config);
  } catch (err) {
    fail(err);
  }
  await withDatabase(config, logger, async (db, url) => {
    const applied = [
      ...(await migrateUp(db.sequelize, logger)),
      // The tables of the simulated sandbox upstream, which the API mounts when it is enabled.
      ...(await migrateSandboxUpstream(config, db.sequelize, logger)),
    ];
    console.error(
      `${describeDatabaseUrl(url)}: ${applied.length ? applied.join(', ') : 'already up to date'}`,
    );
    // Rows written before applicant data was sealed (0012-sealed-applicant-data) are sealed now.
    console.error(describeSealed(await sealLegacyApplicantData(db, keyring), keyring.current.id));
  }).catch(fail);
}
