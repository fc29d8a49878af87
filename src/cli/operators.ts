import type { Command } from 'commander';
import { commands } from './lazy';

/** `durapay operators …`: the console's operator accounts (SPEC §12), in the server's database. */
export function registerOperatorCommands(program: Command): void {
  const operators = program
    .command('operators')
    .description(
      "manage the operator console's accounts (roles: viewer, operator, admin); every change is audited",
    );

  operators
    .command('create')
    .description('create an operator; without --password-stdin a password is generated and printed once')
    .requiredOption('--username <name>', '2-64 letters, digits or . _ @ -')
    .requiredOption(
      '--role <role>',
      'viewer (reads), operator (acts), admin (also manages operators and apps)',
    )
    .option('--password-stdin', 'read the password (at least 12 characters) from standard input')
    .option('--json', 'print the operator (and a generated password) as one JSON line')
    .action((opts: { username: string; role: string; passwordStdin?: boolean; json?: boolean }) =>
      commands.operators().create(opts),
    );

  operators
    .command('list')
    .description('list operators (never their passwords)')
    .option('--json', 'one JSON object per line')
    .action((opts: { json?: boolean }) => commands.operators().list(opts));

  operators
    .command('disable <operator>')
    .description('disable an operator (by username or id) and end its sessions at once')
    .action((who: string) => commands.operators().setDisabled(who, true));
  operators
    .command('enable <operator>')
    .description('enable a disabled operator again')
    .action((who: string) => commands.operators().setDisabled(who, false));

  operators
    .command('set-role <operator>')
    .description('change the role of an operator (the last admin cannot lose it)')
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .action((who: string, opts: { role: string }) => commands.operators().setRole(who, opts));

  operators
    .command('reset-password <operator>')
    .description(
      'set a new password (generated and printed once unless --password-stdin) and end its sessions',
    )
    .option('--password-stdin', 'read the password from standard input')
    .option('--json', 'print a generated password as JSON')
    .action((who: string, opts: { passwordStdin?: boolean; json?: boolean }) =>
      commands.operators().resetPassword(who, opts),
    );

  operators
    .command('totp <operator>')
    .description(
      'turn on TOTP for an operator: prints a new secret and its otpauth:// address once (--off turns it off)',
    )
    .option('--off', 'turn TOTP off')
    .option('--json', 'print {"secret","uri"} as JSON')
    .action((who: string, opts: { off?: boolean; json?: boolean }) => commands.operators().totp(who, opts));
}
