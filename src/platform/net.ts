import type { ChildProcess } from 'node:child_process';
import net from 'node:net';

/**
 * The ports `freePort` draws from: below the kernel's ephemeral range (32768 and up on Linux,
 * 49152 on macOS), where the kernel never picks a port by itself, and above the usual fixed ones
 * (Postgres 5432, Temporal 7233, the API 8080).
 */
const DRAWN_FROM = { low: 10_000, high: 32_000 };
/** Ports this process handed out, not handed out again. */
const handedOut = new Set<number>();

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port on loopback that was free a moment ago, for a process that binds it a little later.
 * It is drawn at random outside the kernel's ephemeral range, so that what other programs ask the
 * kernel for meanwhile (outgoing connections, a Temporal dev server's internal services on port
 * 0) cannot take it before its process binds it; a draw that is taken is drawn again.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = DRAWN_FROM.low + Math.floor(Math.random() * (DRAWN_FROM.high - DRAWN_FROM.low));
    if (handedOut.has(port) || !(await listensOn(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${DRAWN_FROM.low} and ${DRAWN_FROM.high} on 127.0.0.1`);
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
