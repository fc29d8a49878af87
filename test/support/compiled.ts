/**
 * The checkout compiled once per test run for the processes the tests start (`durapay worker`,
 * `durapay start`, the CLI's commands, the chaos, bench and fuzz tools), laid out as an
 * installation is (bin/durapay.js running dist/src/cli/index.js, as the Docker image runs it), so
 * that each process loads plain JavaScript instead of compiling the sources through tsx at every
 * start: about a second of CPU a process, and the suite starts a few hundred of them.
 *
 * The compiler is the one jest's transform uses for the in-process tests (@swc/core, the options
 * of jest.config.js), so the code a process runs is compiled exactly as the code a test calls.
 * The tests of what a person runs in a checkout (`npm start`, `durapay try`) keep running
 * bin/durapay.js of the checkout itself, through tsx.
 */
import fs from 'node:fs';
import path from 'node:path';
import { transformFileSync } from '@swc/core';

const ROOT = path.join(__dirname, '..', '..');

/** What the processes load: the gateway, the simulated upstreams, the tools and what they share. */
const SOURCES = ['src', 'sandbox', 'bench', 'chaos', 'fuzz', 'soak', path.join('test', 'support')];

/** What an installation keeps beside dist/, read at run time (the console's build, the deploy files). */
const LINKED = ['node_modules', 'console', 'deploy'];

function compileTree(from: string, to: string): number {
  let files = 0;
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) {
      // What the tools wrote (bench/results, …) is none of the processes' code.
      if (entry.name === 'results') continue;
      files += compileTree(source, path.join(to, entry.name));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const { code } = transformFileSync(source, {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
        sourceMaps: false,
        swcrc: false,
        configFile: false,
      });
      fs.mkdirSync(to, { recursive: true });
      fs.writeFileSync(path.join(to, entry.name.replace(/\.ts$/, '.js')), code);
      files += 1;
    } else if (entry.isFile() && !entry.name.endsWith('.ts')) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(source, path.join(to, entry.name));
    }
  }
  return files;
}

export interface CompiledCheckout {
  /** The installation's root (bin/, dist/, package.json, and links to node_modules, console, deploy). */
  root: string;
  /** Its `durapay` executable. */
  bin: string;
  /** How many files were compiled. */
  files: number;
}

/** Compiles the checkout into `dir` (which must not exist yet), as an installation of it. */
export function compileCheckout(dir: string): CompiledCheckout {
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  let files = 0;
  for (const source of SOURCES) files += compileTree(path.join(ROOT, source), path.join(dir, 'dist', source));
  fs.copyFileSync(path.join(ROOT, 'bin', 'durapay.js'), path.join(dir, 'bin', 'durapay.js'));
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  for (const name of LINKED) fs.symlinkSync(path.join(ROOT, name), path.join(dir, name), 'dir');
  return { root: dir, bin: path.join(dir, 'bin', 'durapay.js'), files };
}

/** A tool of the checkout (`chaos/main.ts`) as its compiled module in `compiled`. */
export function compiledTool(compiled: string, script: string): string {
  return path.join(compiled, 'dist', script.replace(/\.ts$/, '.js'));
}
