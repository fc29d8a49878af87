import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export type Progress = (line: string) => void;

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function onPath(command: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function findGo(): string | undefined {
  return onPath('go') ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
}

export interface GoInstall {
  /** What is built, for people: "the Temporal CLI v1.5.1". */
  what: string;
  /** `module/path/cmd/x@vX.Y.Z` arguments to `go install`. */
  packages: string[];
  /** The directory the binaries end up in (the cache). */
  targetDir: string;
  /** The binaries `go install` writes (named after their package's directory), and their names in targetDir. */
  binaries: Record<string, string>;
  /** Said when Go is missing: the other ways to get the binaries. */
  withoutGo: string;
}

/**
 * Builds Go programs from the module proxy into a cache directory (a one-time cost of minutes),
 * reporting progress every 10 s as modules download and packages compile. The binaries are
 * built in a staging directory and renamed into place, so a concurrent build can only replace
 * a complete binary with another.
 */
export async function goInstall(spec: GoInstall, progress: Progress): Promise<void> {
  const go = findGo();
  if (!go)
    throw new Error(`${spec.what} is not built and Go is not installed to build it. ${spec.withoutGo}`);
  fs.mkdirSync(spec.targetDir, { recursive: true });
  const staging = fs.mkdtempSync(`${spec.targetDir}-build-`);
  progress(`Building ${spec.what} with ${go} (once; it is cached in ${spec.targetDir})`);

  const started = Date.now();
  let downloaded = 0;
  let compiled = 0;
  let lastLine = '';
  const tail: string[] = [];
  const child = spawn(go, ['install', '-v', ...spec.packages], {
    env: { ...process.env, CGO_ENABLED: '0', GOBIN: staging, GOFLAGS: '-mod=mod' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const onLine = (line: string) => {
    if (!line.trim()) return;
    if (line.startsWith('go: downloading')) downloaded += 1;
    else compiled += 1;
    lastLine = line.trim();
    tail.push(line);
    if (tail.length > 30) tail.shift();
  };
  let buffered = '';
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    lines.forEach(onLine);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const ticker = setInterval(() => {
    const secs = Math.round((Date.now() - started) / 1000);
    progress(`  … ${secs}s: ${downloaded} modules downloaded, ${compiled} packages built (${lastLine})`);
  }, 10_000);
  const code: number = await new Promise((resolve) => {
    child.on('close', (c) => resolve(c ?? 1));
    child.on('error', (err) => {
      tail.push(`could not run ${go}: ${err.message}`);
      resolve(1);
    });
  });
  clearInterval(ticker);
  try {
    if (code !== 0) {
      throw new Error(`Building ${spec.what} failed (go install exited ${code}):\n${tail.join('\n')}`);
    }
    for (const [built, name] of Object.entries(spec.binaries)) {
      fs.renameSync(path.join(staging, built), path.join(spec.targetDir, name));
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  progress(`Built ${spec.what} in ${Math.round((Date.now() - started) / 1000)}s: ${spec.targetDir}`);
}
