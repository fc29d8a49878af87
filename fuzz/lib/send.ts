/** Sends one generated request as its case says, and observes the answer. */
import net from 'node:net';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { signRequest } from '../../src/platform/crypto/http-signature';
import type { FuzzCase } from './generate';
import type { Asked, Observed } from './oracle';

/**
 * What fetch sends for a target: WHATWG URL parsing resolves `.`/`..` segments and encodes.
 * Joined as text, so that a target starting `//` stays a path and never names a host.
 */
export function sentTarget(baseUrl: string, target: string): string {
  const url = new URL(`${baseUrl}${target.startsWith('/') ? '' : '/'}${target}`);
  return `${url.pathname}${url.search}`;
}

function authHeaders(c: FuzzCase, target: string, creds: AppCredentials): Record<string, string> {
  const body = c.body;
  const sign = (over: { secret?: string; keyId?: string; created?: number; body?: Buffer }) =>
    signRequest({
      method: c.method,
      target,
      body: over.body ?? body,
      keyId: over.keyId ?? creds.app_id,
      secret: over.secret ?? creds.secret,
      created: over.created,
    });
  switch (c.auth) {
    case 'unsigned':
      return {};
    case 'signed':
      return { ...sign({}) };
    case 'wrong-digest':
      return { ...sign({ body: Buffer.concat([body ?? Buffer.alloc(0), Buffer.from('x')]) }) };
    case 'wrong-secret':
      return { ...sign({ secret: `${creds.secret.slice(1)}A` }) };
    case 'unknown-app':
      return { ...sign({ keyId: 'app_aaaaaaaaaaaaaaaa' }) };
    case 'stale':
      return { ...sign({ created: Math.floor(Date.now() / 1000) - 1_000 }) };
    case 'garbage-signature':
      return { 'signature-input': 'sig1=("@method");created=x', signature: 'sig1=:AAAA:' };
  }
}

async function viaFetch(baseUrl: string, creds: AppCredentials, c: FuzzCase, timeoutMs: number) {
  const target = sentTarget(baseUrl, c.target);
  const hasBody = c.body !== undefined && c.method !== 'GET' && c.method !== 'HEAD';
  const kase = hasBody ? c : { ...c, body: undefined };
  const headers = { ...c.headers, ...authHeaders(kase, target, creds) };
  const started = performance.now();
  const res = await fetch(`${baseUrl}${target}`, {
    method: c.method,
    headers,
    body: hasBody ? new Uint8Array(c.body!) : undefined,
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = Buffer.from(await res.arrayBuffer());
  const seen: Observed = {
    status: res.status,
    headers: Object.fromEntries([...res.headers].map(([k, v]) => [k.toLowerCase(), v])),
    body,
    ms: performance.now() - started,
  };
  return { asked: { method: c.method, target }, seen };
}

/** Writes the bytes on a connection of their own; reads one answer (to its Content-Length or close). */
function viaSocket(baseUrl: string, raw: Buffer, timeoutMs: number): Promise<Observed> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(Number(url.port), url.hostname);
    let data = Buffer.alloc(0);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const split = data.indexOf('\r\n\r\n');
      const head = (split < 0 ? data : data.subarray(0, split)).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({
        status: Number(head[0]?.split(' ')[1] ?? 0) || 0,
        headers,
        body: split < 0 ? Buffer.alloc(0) : data.subarray(split + 4),
        ms: performance.now() - started,
      });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const split = data.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(
        data.subarray(0, Math.max(0, split)).toString('latin1'),
      );
      if (split >= 0 && length && data.length - split - 4 >= Number(length[1])) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(raw);
  });
}

export async function sendCase(
  baseUrl: string,
  creds: AppCredentials,
  c: FuzzCase,
  timeoutMs: number,
): Promise<{ asked: Asked; seen: Observed }> {
  if (c.raw)
    return { asked: { method: c.method, target: '(raw)' }, seen: await viaSocket(baseUrl, c.raw, timeoutMs) };
  return viaFetch(baseUrl, creds, c, timeoutMs);
}
