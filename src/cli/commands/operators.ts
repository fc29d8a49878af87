import os from 'node:os';
import {
  isOperatorRole,
  OperatorService,
  operatorView,
  type Actor,
  type OperatorRole,
} from '../../modules/operators';
import { resolvePayloadKeys } from '../../platform/crypto/keyring';
import { boot } from '../boot';
import { fail } from '../config';
import { withDatabase } from '../database';

function withOperators<T>(fn: (operators: OperatorService) => Promise<T>): Promise<T> {
  const { config, logger } = boot('cli');
  return withDatabase(config, logger, (db) =>
    fn(
      new OperatorService({
        db,
        payloadKeys: resolvePayloadKeys(config),
        consoleSettings: config.console,
      }),
    ),
  );
}

/** Changes made at the command line are audited as the machine's user: `cli:<user>`. */
function cliActor(): Actor {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // a user without a passwd entry (some containers)
  }
  return { operatorId: null, username: `cli:${user}` };
}

function role(value: string): OperatorRole {
  if (!isOperatorRole(value)) fail(`--role must be one of viewer, operator, admin (got ${value})`);
  return value as OperatorRole;
}

/** A password from standard input (`--password-stdin`), its last newline dropped. */
async function passwordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function printPassword(password: string, json: boolean | undefined, extra: Record<string, unknown>): void {
  if (json) process.stdout.write(`${JSON.stringify({ ...extra, password })}\n`);
  else {
    process.stdout.write(`password  ${password}\n`);
    console.error('Give it to the operator now: it is stored only as a hash and never shown again.');
  }
}

/** `durapay operators create`. */
export async function create(opts: {
  username: string;
  role: string;
  passwordStdin?: boolean;
  json?: boolean;
}): Promise<void> {
  const password = opts.passwordStdin ? await passwordFromStdin() : undefined;
  const made = await withOperators((s) =>
    s.create(cliActor(), { username: opts.username, role: role(opts.role), password }),
  ).catch(fail);
  const view = operatorView(made.operator);
  if (made.generated) printPassword(made.password, opts.json, view);
  else if (opts.json) process.stdout.write(`${JSON.stringify(view)}\n`);
  console.error(
    `operator ${view.username} (${view.operator_id}) is a${view.role === 'admin' ? 'n' : ''} ${view.role}`,
  );
}

/** `durapay operators list`. */
export async function list(opts: { json?: boolean }): Promise<void> {
  const operators = await withOperators((s) => s.list()).catch(fail);
  for (const o of operators.map(operatorView)) {
    process.stdout.write(
      opts.json
        ? `${JSON.stringify(o)}\n`
        : `${o.operator_id}  ${o.role.padEnd(8)}  ${(o.disabled ? 'disabled' : 'active').padEnd(8)}  ${o.totp_enabled ? 'totp' : '    '}  ${o.created_at}  ${o.username}\n`,
    );
  }
  if (!opts.json && operators.length === 0)
    console.error('no operators yet: durapay operators create --username NAME --role admin');
}

/** `durapay operators disable` and `enable`. */
export async function setDisabled(who: string, disabled: boolean): Promise<void> {
  const after = await withOperators((s) =>
    disabled ? s.disable(cliActor(), who) : s.enable(cliActor(), who),
  ).catch(fail);
  console.error(`${after.username} is ${disabled ? 'disabled; its sessions ended' : 'enabled'}`);
}

/** `durapay operators set-role`. */
export async function setRole(who: string, opts: { role: string }): Promise<void> {
  const after = await withOperators((s) => s.setRole(cliActor(), who, role(opts.role))).catch(fail);
  console.error(`${after.username} is now ${after.role}`);
}

/** `durapay operators reset-password`. */
export async function resetPassword(
  who: string,
  opts: { passwordStdin?: boolean; json?: boolean },
): Promise<void> {
  const password = opts.passwordStdin ? await passwordFromStdin() : undefined;
  const done = await withOperators((s) => s.resetPassword(cliActor(), who, password)).catch(fail);
  if (done.generated) printPassword(done.password, opts.json, { operator_id: done.operator.operatorId });
  console.error(`${done.operator.username}: password changed; its sessions ended`);
}

/** `durapay operators totp`. */
export async function totp(who: string, opts: { off?: boolean; json?: boolean }): Promise<void> {
  const done = await withOperators((s) => s.setTotp(cliActor(), who, !opts.off)).catch(fail);
  if (opts.off) {
    console.error(`${done.operator.username}: TOTP is off`);
    return;
  }
  if (opts.json) process.stdout.write(`${JSON.stringify({ secret: done.secret, uri: done.uri })}\n`);
  else {
    process.stdout.write(`secret  ${done.secret}\nuri     ${done.uri}\n`);
    console.error(
      `${done.operator.username}: TOTP is on. Add the secret (or the otpauth:// address as a QR code) to an authenticator app; the console asks for its code at sign-in.`,
    );
  }
}
