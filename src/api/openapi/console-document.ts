import { consoleOperations } from '../../modules/console';
import type { ConsoleAccess } from '../../platform/http/openapi';
import { CONSOLE_DATA_SCHEMAS } from './console-schemas';
import { describeOperation } from './operations';
import { ENVELOPE_SCHEMAS, schemaRef, type DocumentedErrorCode } from './response-schemas';

/**
 * The OpenAPI 3.1 description of the operator console's JSON API (SPEC §12), served at
 * `GET /console/openapi.json` beside the app API's `/openapi.json`: the console module's
 * operations (src/modules/console/openapi.ts) with their queries and bodies generated from the
 * joi schemas their routes validate with, and their answers from ./console-schemas.ts. The
 * console's client types and menus are generated from it (src/cli/dev/console-api.ts), and the
 * tests check every answer the console's API gives against it, as they do the app API's.
 */

type Schema = Record<string, unknown>;

const STATUS_DESCRIPTIONS: Record<number, string> = {
  200: 'Success.',
  400: 'The request is malformed: a body that is not JSON or over 1 MiB, a field or a filter that fails validation (the message names it), a bad path value or cursor.',
  401: 'No session: signed out, expired, ended elsewhere, or the credentials of a sign-in are wrong.',
  403: "The operator's role does not allow it, or a change came without the session's CSRF token or from a page of another origin.",
  404: 'Not found.',
  422: 'The request is well formed but the business state refuses it (as the app API would).',
  429: 'Too many failed sign-ins for the account or from the address: signing in is refused for a while.',
  500: 'durapay failed; the message never carries a stack trace or SQL text.',
  502: 'The channel refused or did not answer within the request deadline (10 s).',
};

/** What a session's requests may answer besides their own codes: the session's and the role's. */
function sessionErrors(access: ConsoleAccess): Partial<Record<number, DocumentedErrorCode[]>> {
  if (access === 'anyone') return { 403: ['permission_denied'] };
  return { 401: ['unauthorized'], 403: ['permission_denied'] };
}

const ACCESS_NOTE: Record<ConsoleAccess, string> = {
  anyone: 'No session needed.',
  viewer: 'Any operator signed in (`viewer` and up).',
  operator: 'An operator signed in as `operator` or `admin`; a change sends `X-CSRF-Token`.',
  admin: 'An operator signed in as `admin`; a change sends `X-CSRF-Token`.',
};

export interface ConsoleDocumentOptions {
  /** The package's version. */
  version: string;
}

/** The document served at `GET /console/openapi.json`. */
export function buildConsoleDocument(opts: ConsoleDocumentOptions): Schema {
  const requestBodies: Record<string, Schema> = {};
  const paths: Record<string, Record<string, Schema>> = {};
  for (const op of consoleOperations) {
    (paths[op.path] ??= {})[op.method] = describeOperation(op, requestBodies, {
      authErrors: sessionErrors(op.access),
      statusDescriptions: STATUS_DESCRIPTIONS,
      security: op.access === 'anyone' ? [] : [{ consoleSession: [] }],
      note: ACCESS_NOTE[op.access],
    });
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'durapay operator console',
      version: opts.version,
      summary: "The JSON API of durapay's operator console, for the people who run durapay.",
      description: [
        'The console at `/console` is its client. Every answer is the envelope `{"code", "message", "data", "request_id"}`, as the app API answers (`/openapi.json`). A session is a cookie set by signing in; every change also sends the session\'s CSRF token as `X-CSRF-Token`, from a page of the same origin. Roles: `viewer` reads, `operator` also acts on orders, refunds, transfers, notifications, merchants and reconciliation, `admin` also manages operators and apps and reads the audit log. Every action, done or refused, is written to the audit log.',
        '',
        'Lists are keyset pages: `limit` (1–100, 20 unless given) and `after` (the `next` of the page before).',
      ].join('\n'),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'This durapay API.' }],
    tags: [
      { name: 'Session', description: 'Signing in and out.' },
      { name: 'Operators', description: "The console's operators and the audit log: admins only." },
      { name: 'Overview', description: 'The figures of the home page.' },
      { name: 'Orders', description: 'Orders of every app, and the actions on them.' },
      { name: 'Refunds', description: 'Refunds of every app, and paying out an abnormal one.' },
      { name: 'Transfers', description: 'Transfers of every app, and cancelling one.' },
      { name: 'Notifications', description: 'Notifications of every app, and resending one.' },
      { name: 'Merchants', description: 'Merchants of every app, their accounts and applications.' },
      { name: 'Reconciliation', description: 'Reconciliation runs, their findings, and resolving one.' },
      {
        name: 'Complaints',
        description: 'Consumer complaints of every app, and replying, refunding and completing one.',
      },
      { name: 'Apps', description: 'The client apps, and disabling one.' },
    ],
    paths,
    components: {
      securitySchemes: {
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'durapay_console',
          description: 'The session cookie `POST /console/api/session` sets.',
        },
      },
      headers: {
        'X-Request-Id': { description: 'The request id.', schema: schemaRef('RequestId') },
      },
      schemas: { ...ENVELOPE_SCHEMAS, ...CONSOLE_DATA_SCHEMAS, ...requestBodies },
    },
  };
}
