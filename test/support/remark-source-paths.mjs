/**
 * A remark plugin, run by `npm run lint:links` beside remark-validate-links (package.json,
 * `remarkConfig`), and by test/unit/doc-paths.test.ts: every repository path the README and
 * `docs/` name in inline code (`src/…`, `test/…`, `scripts/…`, `soak/…`, `.ci/…`, …) must exist.
 * remark-validate-links checks the paths they name in links; this checks those in backticks.
 *
 * A path is a file or a directory; one that ends in `/` must be a directory. A glob
 * (`src/modules/*\/activities.ts`, `docs/**\/*.md`) or a placeholder (`src/channels/<code>/`,
 * read as `*`) must match at least one. A path git ignores (`console/dist`, `bench/results/…`)
 * is made by a build or a run, not kept in the repository, and is not checked. Paths are read
 * from the repository's root (the directory remark runs in), wherever the page is; URLs, and
 * anything not under one of the folders below, are not paths it checks. Fenced code blocks
 * (diagrams, shell sessions) are not read.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The folders whose paths are checked: the repository's, and `scripts/`, which it may grow. */
const ROOTS = [
  'src',
  'test',
  'scripts',
  'soak',
  '.ci',
  'bench',
  'chaos',
  'fuzz',
  'sandbox',
  'console',
  'deploy',
  'bin',
  'docs',
];
const PATH_LIKE = new RegExp(`^(?:\\./)?(?:${ROOTS.map((r) => r.replace('.', '\\.')).join('|')})/`);

/**
 * The repository paths named in one inline code's text: each word (split at spaces and `=`, as
 * in `MODEL_RUNS=100 npx jest test/integration/model.test.ts`) under one of the folders, without
 * surrounding punctuation, a `:line` or a `#anchor`.
 *
 * @param {string} text
 * @returns {string[]}
 */
export function pathsIn(text) {
  const found = [];
  for (const word of text.split(/[\s=]+/)) {
    const bare = word
      .replace(/^[("'[]+/, '')
      .replace(/[)"',;.\]]+$/, '')
      .replace(/#.*$/, '')
      .replace(/(?::\d+)+$/, '');
    if (bare.includes('://') || !PATH_LIKE.test(bare)) continue;
    found.push(bare.replace(/^\.\//, ''));
  }
  return found;
}

/** @param {string} segment */
function segmentPattern(segment) {
  const source = segment
    .split('')
    .map((c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/** @param {string} p */
function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** @param {string} dir */
function entriesOf(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Whether `ref` (relative to `root`) names something that exists: the file or directory, a
 * directory when it ends in `/`, or at least one match of a glob or placeholder.
 *
 * @param {string} root
 * @param {string} ref
 * @returns {boolean}
 */
export function exists(root, ref) {
  const dirOnly = ref.endsWith('/');
  const segments = ref
    .replace(/<[^>/]*>/g, '*')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  /** @type {(at: string, i: number) => boolean} */
  const walk = (at, i) => {
    if (i === segments.length) return dirOnly ? isDirectory(at) : fs.existsSync(at);
    const segment = segments[i];
    if (segment === '**') {
      return (
        walk(at, i + 1) ||
        entriesOf(at).some((e) => isDirectory(path.join(at, e)) && walk(path.join(at, e), i))
      );
    }
    if (!/[*?]/.test(segment)) return walk(path.join(at, segment), i + 1);
    const pattern = segmentPattern(segment);
    return entriesOf(at).some((e) => pattern.test(e) && walk(path.join(at, e), i + 1));
  };
  return walk(root, 0);
}

/**
 * Which of `refs` git ignores (built or written by a run, never in the repository): the path
 * itself, or anything under it (a directory pattern such as `dist/`). None without git.
 *
 * @param {string} root
 * @param {string[]} refs
 * @returns {Set<string>}
 */
function ignoredByGit(root, refs) {
  if (refs.length === 0) return new Set();
  const probe = (ref) =>
    ref
      .replace(/<[^>/]*>/g, 'x')
      .replace(/[*?]+/g, 'x')
      .replace(/\/+$/, '');
  const asked = refs.flatMap((ref) => [probe(ref), `${probe(ref)}/x`]);
  let out = '';
  try {
    out = execFileSync('git', ['check-ignore', '--no-index', '--stdin'], {
      cwd: root,
      input: `${asked.join('\n')}\n`,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'ignore'],
    });
  } catch (err) {
    // Status 1: none of them is ignored. Anything else (no git, no repository): none known to be.
    out = typeof err?.stdout === 'string' ? err.stdout : '';
  }
  const ignored = new Set(out.split('\n').filter(Boolean));
  return new Set(refs.filter((ref) => ignored.has(probe(ref)) || ignored.has(`${probe(ref)}/x`)));
}

/**
 * @param {{ include?: string[] }} [options] the pages checked, relative to the root: a file, or
 *   a folder ending in `/` (default: the README and `docs/`; the CHANGELOG names paths of its time)
 */
export default function remarkSourcePaths(options = {}) {
  const include = options.include ?? ['README.md', 'docs/'];
  return (tree, file) => {
    const root = file.cwd;
    const page = path
      .relative(root, path.resolve(root, file.path ?? ''))
      .split(path.sep)
      .join('/');
    if (!include.some((i) => (i.endsWith('/') ? page.startsWith(i) : page === i))) return;
    /** @type {{ ref: string, node: any }[]} */
    const missing = [];
    const visit = (node) => {
      if (node.type === 'inlineCode') {
        for (const ref of pathsIn(node.value)) if (!exists(root, ref)) missing.push({ ref, node });
      }
      for (const child of node.children ?? []) visit(child);
    };
    visit(tree);
    const ignored = ignoredByGit(
      root,
      missing.map((m) => m.ref),
    );
    for (const { ref, node } of missing) {
      if (ignored.has(ref)) continue;
      const what = /[*?<]/.test(ref)
        ? 'nothing matches'
        : ref.endsWith('/')
          ? 'no such directory'
          : 'no such file or directory';
      file.message(`Cannot find \`${ref}\` in the repository (${what})`, {
        place: node.position,
        ruleId: 'missing-source-path',
        source: 'remark-source-paths',
      });
    }
  };
}
