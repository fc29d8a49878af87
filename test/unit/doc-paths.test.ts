/**
 * The README and docs/ name only what the repository has: the paths they name in links
 * (remark-validate-links) and in backticks (test/support/remark-source-paths.mjs), both run by
 * `npm run lint:links` with the package's remark configuration, which these tests run too.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const repo = path.resolve(__dirname, '../..');
const remarkCli = path.join(repo, 'node_modules/remark-cli/cli.js');

/** remark over `targets` in `cwd`, configured as `npm run lint:links` is (package.json). */
function remark(cwd: string, targets: string[]): { status: number | null; output: string } {
  const run = spawnSync(
    process.execPath,
    [
      remarkCli,
      '--rc-path',
      path.join(repo, 'package.json'),
      '--frail',
      '--quiet',
      '--no-stdout',
      '--no-color',
      ...targets,
    ],
    { cwd, encoding: 'utf8' },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

/** Every page of the user documentation: the README and each Markdown file under docs/. */
function userDocs(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(path.join(repo, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) return walk(rel);
      return e.name.endsWith('.md') ? [rel] : [];
    });
  return ['README.md', ...walk('docs')];
}

/** Written for contributors, who have the spec: these may cite it. */
const CONTRIBUTOR_DOCS = new Set(['docs/testing.md']);

describe('the documentation', () => {
  test('when the README and docs/ are checked, then every source path they name in backticks or links exists', () => {
    expect(remark(repo, ['README.md', 'docs'])).toEqual({ status: 0, output: '' });
  });

  test('when a page names a path the repository lacks, then the check names each one and fails', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-doc-paths-'));
    try {
      const write = (rel: string, text = '') => {
        fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(dir, rel), text);
      };
      write('src/modules/orders/activities.ts');
      write('src/worker/index.ts');
      write('.ci/run');
      write(
        'docs/guide.md',
        [
          '# Guide',
          '',
          // Each of these exists: a file, a directory with and without its `/`, a glob, a
          // placeholder, a path inside a command, a URL (never checked) and a link.
          'Fine: `src/worker/index.ts`, `src/worker/`, `src/worker`, `src/modules/*/activities.ts`,',
          '`src/modules/<name>/activities.ts`, `npx jest .ci/run:3`, `https://example.com/src/gone.ts`,',
          '[the worker](../src/worker/index.ts).',
          '',
          'Gone: `src/activities.ts`, `src/worker/index.ts/`, `src/modules/*/workflow.ts`,',
          '`scripts/check.sh`, `soak/main.ts`, [the sweeper](../src/modules/orders/sweeper.ts).',
          '',
        ].join('\n'),
      );
      write('README.md', 'See `test/unit/gone.test.ts`.\n');
      // Not a page of the documentation: the CHANGELOG names the paths of its time.
      write('CHANGELOG.md', 'Moved `src/old.ts`.\n');

      const { status, output } = remark(dir, ['README.md', 'CHANGELOG.md', 'docs']);
      expect(status).toBe(1);
      const named = [...output.matchAll(/Cannot find (?:file )?`([^`]+)`/g)].map((m) => m[1]);
      expect(named.sort()).toEqual(
        [
          '../src/modules/orders/sweeper.ts',
          'scripts/check.sh',
          'soak/main.ts',
          'src/activities.ts',
          'src/modules/*/workflow.ts',
          'src/worker/index.ts/',
          'test/unit/gone.test.ts',
        ].sort(),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('when the user documentation is read, then no page points at the SPEC its readers do not have', () => {
    const pointers = userDocs()
      .filter((page) => !CONTRIBUTOR_DOCS.has(page))
      .flatMap((page) =>
        fs
          .readFileSync(path.join(repo, page), 'utf8')
          .split('\n')
          .flatMap((line, i) => (/\bSPEC\b/.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(pointers).toEqual([]);
  });
});
