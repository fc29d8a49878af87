import fs from 'node:fs';
import { signRequest } from '../../platform/crypto/http-signature';
import { fail, loadCliConfig } from '../config';
import { signingApp } from '../credentials';

/** `durapay sign`: only the configuration and the signing code, so that it answers at once. */
/** `durapay sign`'s options, as commander parses them. */
export interface SignOptions {
  appId?: string;
  secret?: string;
  method: string;
  path: string;
  body?: string;
  format: string;
}

export function sign(opts: SignOptions): void {
  const config = loadCliConfig();
  const app = signingApp(config.dataDir, opts);
  if (!app) fail('give --app-id and --secret (or run npm start once to create the dev app)');
  if (!opts.path.startsWith('/')) fail('--path must start with /');
  if (!['headers', 'curl', 'json'].includes(opts.format)) fail('--format must be headers, curl or json');
  let body: Buffer | undefined;
  try {
    body = opts.body === undefined ? undefined : fs.readFileSync(opts.body === '-' ? 0 : opts.body);
  } catch (err) {
    fail(err);
  }
  const headers = signRequest({
    method: opts.method.toUpperCase(),
    target: opts.path,
    body,
    keyId: app.appId,
    secret: app.secret,
  });
  const names: Record<string, string> = {
    'content-digest': 'Content-Digest',
    'signature-input': 'Signature-Input',
    signature: 'Signature',
  };
  const pairs = Object.entries(headers).map(([k, v]) => [names[k] ?? k, v] as const);
  if (opts.format === 'json') {
    process.stdout.write(`${JSON.stringify(Object.fromEntries(pairs))}\n`);
  } else if (opts.format === 'curl') {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    process.stdout.write(`${pairs.map(([k, v]) => `-H ${quote(`${k}: ${v}`)}`).join(' ')}\n`);
  } else {
    process.stdout.write(pairs.map(([k, v]) => `${k}: ${v}\n`).join(''));
  }
}
