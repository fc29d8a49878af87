import { newPayloadKeyEntry } from '../../platform/crypto/keyring';
import { fail } from '../config';

/** `durapay keys new`: needs no configuration, database or logger. */
export function keysNew(opts: { id: string }): void {
  try {
    // stdout, alone on its line: `export DURAPAY_PAYLOAD_KEYS=$(npx durapay keys new --id 2026-11),$OLD`.
    process.stdout.write(`${newPayloadKeyEntry(opts.id)}\n`);
  } catch (err) {
    fail(err);
  }
}
