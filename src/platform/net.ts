import type { ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A TCP port on loopback that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls `url` (a readiness endpoint) until it answers 200. Fails at the deadline with the last
 * answer, or at once when `child`, the process that should serve it, exits.
 */
export async function waitForReady(
  url: string,
  opts: { timeoutMs: number; child?: ChildProcess; what?: string },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const what = opts.what ?? url;
  let last = '';
  while (Date.now() < deadline) {
    if (opts.child && opts.child.exitCode !== null) {
      throw new Error(`${what} exited (code ${opts.child.exitCode}) during start-up`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${what} did not become ready within ${opts.timeoutMs} ms (last answer: ${last})`);
}
