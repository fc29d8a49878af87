import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { APP_ID_PATTERN, parseScopes } from '../../src/modules/apps/rules';
import { generateAppId, generateSecret, generateWebhookSecret } from '../../src/platform/crypto/credentials';
import { resolveMasterKey } from '../../src/platform/crypto/master-key';
import { SecretBox } from '../../src/platform/crypto/secret-box';

describe('credentials', () => {
  test('when credentials are generated, then they have the SPEC §2 forms and differ each time', () => {
    const ids = new Set(Array.from({ length: 50 }, generateAppId));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(APP_ID_PATTERN);
    const secret = generateSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    const whsec = generateWebhookSecret();
    expect(whsec).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(whsec.slice(6), 'base64')).toHaveLength(32);
  });
});

describe('scopes', () => {
  test('when scopes are parsed, then duplicates fold and unknown ones are refused', () => {
    expect(parseScopes('payments, merchants,payments')).toEqual(['payments', 'merchants']);
    expect(() => parseScopes('payments,admin')).toThrow(/unknown scope\(s\): admin/);
    expect(() => parseScopes(' , ')).toThrow(/at least one scope/);
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  test('when a secret is sealed, then it opens with the same context and is not stored in clear', () => {
    const sealed = box.seal('s3cret', 'app_x:secret');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain('s3cret');
    expect(box.open(sealed, 'app_x:secret')).toBe('s3cret');
    expect(box.seal('s3cret', 'app_x:secret')).not.toBe(sealed);
  });

  test('when the context or the key differs, then opening fails', () => {
    const sealed = box.seal('s3cret', 'app_x:secret');
    expect(() => box.open(sealed, 'app_y:secret')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'app_x:secret')).toThrow();
  });
});

describe('master key', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-key-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('when none is configured in development, then one is generated once (0600) and reused', () => {
    const config = loadConfig({ DURAPAY_DATA_DIR: dir });
    const first = resolveMasterKey(config);
    expect(first).toHaveLength(32);
    expect(fs.statSync(path.join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(resolveMasterKey(config).equals(first)).toBe(true);
  });

  test('when DURAPAY_MASTER_KEY is set, then it is used', () => {
    const key = randomBytes(32);
    expect(resolveMasterKey(loadConfig({ DURAPAY_MASTER_KEY: key.toString('base64') })).equals(key)).toBe(
      true,
    );
  });

  test('when production has no key, then start-up fails naming the variable', () => {
    expect(() => resolveMasterKey(loadConfig({ NODE_ENV: 'production', DURAPAY_DATA_DIR: dir }))).toThrow(
      /"DURAPAY_MASTER_KEY" is required in production/,
    );
  });

  test('when the key is not 32 bytes, then configuration fails naming the variable', () => {
    expect(() => loadConfig({ DURAPAY_MASTER_KEY: randomBytes(16).toString('base64') })).toThrow(
      /"DURAPAY_MASTER_KEY" must be the base64 encoding of exactly 32 bytes/,
    );
  });
});
