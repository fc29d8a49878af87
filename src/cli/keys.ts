import type { Command } from 'commander';
import { ConfigError, type Config } from '../platform/config';
import { newPayloadKeyEntry, resolvePayloadKeys } from '../platform/crypto/keyring';
import { retirePayloadKey } from '../platform/crypto/key-registry';
import type { Logger } from '../platform/logger';
import { applicantDataSealedWith, describeSealed, sealLegacyApplicantData } from './applicant-data';
import { withDatabase } from './database';

type Boot = (role: string) => { config: Config; logger: Logger };
type Fail = (err: unknown) => never;

/** `durapay keys …`: the payload keys that seal Temporal payloads and applicant data. */
export function registerKeyCommands(program: Command, boot: Boot, fail: Fail): void {
  const keys = program.command('keys').description('the payload keys that seal data at rest');
  /** The configuration and its payload keys; a bad key list ends the command with its reason. */
  const bootWithKeys = () => {
    const booted = boot('cli');
    try {
      return { ...booted, keyring: resolvePayloadKeys(booted.config) };
    } catch (err) {
      return fail(err);
    }
  };

  keys
    .command('new')
    .description('print a new payload key as DURAPAY_PAYLOAD_KEYS takes it (id:base64 of 32 random bytes)')
    .option(
      '--id <id>',
      'its id, 1-32 characters of A-Z a-z 0-9 . _ -',
      new Date().toISOString().slice(0, 10),
    )
    .action((opts: { id: string }) => {
      try {
        // stdout, alone on its line: `export DURAPAY_PAYLOAD_KEYS=$(npx durapay keys new --id 2026-11),$OLD`.
        process.stdout.write(`${newPayloadKeyEntry(opts.id)}\n`);
      } catch (err) {
        fail(err);
      }
    });

  keys
    .command('retire <keyId>')
    .description(
      'record that no history or row needs an old payload key any more, so processes may start without it',
    )
    .action(async (keyId: string) => {
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
        return retirePayloadKey(db, keyId, keyring.current.id);
      }).catch(fail);
      console.error(
        retired
          ? `payload key ${keyId} retired: processes may now start without it`
          : `payload key ${keyId} has sealed nothing here, or was retired already`,
      );
    });

  keys
    .command('reseal')
    .description(
      'seal applicant data still held in plain text (rows written before it was sealed) with the current payload key',
    )
    .option(
      '--rotate',
      'also seal again, with the current key, what an older key sealed (after a new key was put first)',
    )
    .action(async (opts: { rotate?: boolean }) => {
      const { config, logger, keyring } = bootWithKeys();
      const sealed = await withDatabase(config, logger, (db) =>
        sealLegacyApplicantData(db, keyring, { rotate: opts.rotate === true }),
      ).catch(fail);
      console.error(describeSealed(sealed, keyring.current.id));
    });
}
