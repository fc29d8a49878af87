/**
 * The operator console's client code generated from the console's API document
 * (src/api/openapi/console-document.ts): `console/src/api/generated/openapi.ts`, the types of
 * every operation and schema (openapi-typescript), and `lists.ts`, the lists its menus offer
 * (channels, statuses, roles, categories, events, each channel's account fields), taken from the
 * document's named schemas. Nothing of them is written by hand, and they are not committed: the
 * console's build, `npm run typecheck` and `npm start` write them, each time only if they changed
 * (so a build that is current stays current).
 *
 * `npm run console:api` runs it; `node --require tsx/cjs src/cli/dev/console-api.ts` is the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import type * as OpenapiTypescript from 'openapi-typescript';
import { buildConsoleDocument } from '../../api/openapi/console-document';
import { CONSOLE_LISTS } from '../../api/openapi/console-schemas';
import { CONSOLE_DIR } from '../../platform/console-build';

type Schema = Record<string, unknown>;

/** Where the generated files go. */
export const CONSOLE_API_DIR = path.join(CONSOLE_DIR, 'src', 'api', 'generated');

const HEADER = `// Generated from the console's API document (src/api/openapi/console-document.ts) by
// src/cli/dev/console-api.ts: do not edit. \`npm run console:api\` writes it again.
`;

/** The lists of the console's menus, as TypeScript. */
export function consoleLists(document: Schema): string {
  const schemas = (document.components as { schemas: Record<string, Schema> }).schemas;
  const lines = [HEADER];
  for (const [constant, name] of Object.entries(CONSOLE_LISTS)) {
    const values = schemas[name]?.enum;
    if (!Array.isArray(values)) throw new Error(`the console document has no list ${name}`);
    lines.push(
      `/** ${String(schemas[name]!.description ?? name)} */`,
      `export const ${constant} = ${JSON.stringify(values)} as const;`,
      '',
    );
  }
  const fields = (
    schemas.AccountFields as { properties: Record<string, { properties: Record<string, Schema> }> }
  ).properties;
  const accountFields = Object.fromEntries(
    Object.entries(fields).map(([channel, { properties }]) => [
      channel,
      Object.entries(properties).map(([name, field]) => ({
        name,
        label: String(field.title ?? name),
        token: field.writeOnly === true,
      })),
    ]),
  );
  lines.push(
    `/** ${String(schemas.AccountFields!.description)} */`,
    `export const ACCOUNT_FIELDS: Readonly<Record<string, readonly { name: string; label: string; token: boolean }[]>> = ${JSON.stringify(accountFields, null, 2)};`,
    '',
  );
  return lines.join('\n');
}

/** Writes a file only when its text changed; answers whether it did. */
function writeIfChanged(file: string, text: string): boolean {
  try {
    if (fs.readFileSync(file, 'utf8') === text) return false;
  } catch {
    // Not written yet.
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return true;
}

// Node's own import(), which neither tsx nor jest's transform rewrites into require(): the
// library's CommonJS build requires ES modules, which only Node's ES module loader loads
// (src/platform/console-build.ts loads Vite the same way).
const nativeImport = new Function('specifier', 'return import(specifier)') as (
  specifier: string,
) => Promise<typeof OpenapiTypescript>;

/** Writes the console's generated client code into `dir`; answers the files it changed. */
export async function writeConsoleApi(dir: string = CONSOLE_API_DIR): Promise<string[]> {
  const document = buildConsoleDocument({ version: '0.0.0' });
  const { default: openapiTS, astToString } = await nativeImport('openapi-typescript');
  const types = astToString(
    await openapiTS(document as unknown as Parameters<typeof openapiTS>[0], { defaultNonNullable: false }),
  );
  const changed: string[] = [];
  for (const [name, text] of [
    ['openapi.ts', `${HEADER}\n${types}`],
    ['lists.ts', consoleLists(document)],
  ] as const) {
    if (writeIfChanged(path.join(dir, name), text)) changed.push(name);
  }
  return changed;
}

if (require.main === module) {
  writeConsoleApi().then(
    (changed) =>
      process.stderr.write(
        changed.length > 0
          ? `wrote ${changed.join(' and ')} in ${path.relative(process.cwd(), CONSOLE_API_DIR)}\n`
          : '',
      ),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
