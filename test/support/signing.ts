import { signRequest, type SignOptions } from '../../src/platform/crypto/http-signature';

export interface Credentials {
  app_id: string;
  secret: string;
}

/** Sends a request signed the way durapay's SDK signs, with optional overrides to break it. */
export async function signedFetch(
  baseUrl: string,
  creds: Credentials,
  method: string,
  target: string,
  opts: {
    json?: unknown;
    body?: string | Buffer;
    sign?: Partial<SignOptions>;
    headers?: Record<string, string>;
    /** Change the request after signing (tamper tests). */
    send?: { method?: string; target?: string; body?: string | Buffer };
  } = {},
): Promise<Response> {
  const body = opts.json !== undefined ? JSON.stringify(opts.json) : opts.body;
  const signed = signRequest({
    method,
    target,
    body,
    keyId: creds.app_id,
    secret: creds.secret,
    ...opts.sign,
  });
  const headers: Record<string, string> = {
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...signed,
    ...opts.headers,
  };
  const sendBody = opts.send?.body ?? body;
  return fetch(`${baseUrl}${opts.send?.target ?? target}`, {
    method: opts.send?.method ?? method,
    headers,
    body: sendBody,
  });
}
