import type { Command } from 'commander';
import { commands } from './lazy';

/** `durapay keys …`: the payload keys that seal Temporal payloads and applicant data. */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('the payload keys that seal data at rest');

  keys
    .command('new')
    .description('print a new payload key as DURAPAY_PAYLOAD_KEYS takes it (id:base64 of 32 random bytes)')
    .option(
      '--id <id>',
      'its id, 1-32 characters of A-Z a-z 0-9 . _ -',
      new Date().toISOString().slice(0, 10),
    )
    .action((opts: { id: string }) => commands.keysNew().keysNew(opts));

  keys
    .command('retire <keyId>')
    .description(
      'record that no history or row needs an old payload key any more, so processes may start without it',
    )
    .action((keyId: string) => commands.keys().retire(keyId));

  keys
    .command('reseal')
    .description(
      'seal applicant data still held in plain text (rows written before it was sealed) with the current payload key',
    )
    .option(
      '--rotate',
      'also seal again, with the current key, what an older key sealed (after a new key was put first)',
    )
    .action((opts: { rotate?: boolean }) => commands.keys().reseal(opts));
}
