import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT_DIR } from './paths';

/** The operator console's single-page app (an npm workspace) and what its build writes. */
export const CONSOLE_DIR = path.join(ROOT_DIR, 'console');
export const CONSOLE_DIST_DIR = path.join(CONSOLE_DIR, 'dist');

/** What the build reads: a change to any of them makes the built console stale. */
const SOURCES = ['src', 'public', 'index.html', 'vite.config.ts', 'package.json', 'tsconfig.json'];

function newestChange(p: string): number {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its folder
  for (const name of fs.readdirSync(p)) newest = Math.max(newest, newestChange(path.join(p, name)));
  return newest;
}

/** Why the console must be built now, or null when `console/dist` is up to date. */
export function consoleBuildReason(dir: string = CONSOLE_DIR): string | null {
  const index = path.join(dir, 'dist', 'index.html');
  if (!fs.existsSync(path.join(dir, 'src'))) return null; // an installation without the sources
  if (!fs.existsSync(index)) return 'not built yet';
  const built = fs.statSync(index).mtimeMs;
  return SOURCES.some((s) => newestChange(path.join(dir, s)) > built) ? 'its sources changed' : null;
}

interface Vite {
  build(config: {
    root: string;
    configFile?: string;
    logLevel?: 'error' | 'warn' | 'info' | 'silent';
    build?: { outDir?: string; emptyOutDir?: boolean };
  }): Promise<unknown>;
}

// Node's own import(): tsx (`durapay start`) and jest's transform turn an import() in this CommonJS
// file into require(), and tsx then rewrites Vite's ES modules into CommonJS, which breaks how Vite
// finds its own files. A function made at run time is compiled by neither.
const nativeImport = new Function('specifier', 'return import(specifier)') as (
  specifier: string,
) => Promise<unknown>;

/** Vite, ESM only, from the console workspace that depends on it. */
async function loadVite(dir: string): Promise<Vite> {
  const entry = createRequire(path.join(dir, 'package.json')).resolve('vite');
  return (await nativeImport(pathToFileURL(entry).href)) as Vite;
}

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Puts the fresh build in place of the old one; when another build got there first, keeps that one. */
function swapIn(staging: string, dist: string, retired: string): void {
  try {
    fs.renameSync(dist, retired);
  } catch (err) {
    if (codeOf(err) !== 'ENOENT') throw err;
  }
  try {
    fs.renameSync(staging, dist);
  } catch (err) {
    if (codeOf(err) !== 'ENOTEMPTY' && codeOf(err) !== 'EEXIST') throw err;
  }
}

/**
 * Builds the console into `console/dist` when it is missing or older than its sources, so that
 * `npm start` and `npm test` serve a current console from a fresh clone. `prepare` first writes
 * what the build reads that is made from the gateway's code (its client generated from the
 * console's API document, src/cli/dev/console-api.ts): only where the console's sources are (a
 * checkout, not an installation), and changing a file only when its text changed. The build goes
 * to a folder of its own and then takes the place of the old one, so an API serving
 * `console/dist` meanwhile (or a second build started at once) never sees it half written.
 */
export async function ensureConsoleBuilt(
  log: (line: string) => void,
  dir: string = CONSOLE_DIR,
  prepare?: () => Promise<unknown>,
): Promise<void> {
  if (prepare && fs.existsSync(path.join(dir, 'src'))) await prepare();
  const reason = consoleBuildReason(dir);
  if (!reason) return;
  const started = Date.now();
  const vite = await loadVite(dir);
  const dist = path.join(dir, 'dist');
  const staging = path.join(dir, `.dist-${process.pid}-${Date.now()}`);
  const retired = `${staging}-old`;
  try {
    await vite.build({
      root: dir,
      configFile: path.join(dir, 'vite.config.ts'),
      logLevel: 'error',
      build: { outDir: staging, emptyOutDir: true },
    });
    swapIn(staging, dist, retired);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    fs.rmSync(retired, { recursive: true, force: true });
  }
  log(
    `Built the operator console (${reason}) into console/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}
