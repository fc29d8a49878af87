import { execFileSync } from 'node:child_process';
import { createDecipheriv, hkdfSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/platform/config';
import { FieldSealer, MissingKeyError } from '../../src/platform/crypto/field-sealer';
import {
  Keyring,
  newPayloadKeyEntry,
  parsePayloadKeys,
  resolvePayloadKeys,
} from '../../src/platform/crypto/keyring';
import { EncryptionCodec, isEncryptedPayload } from '../../src/platform/payload-codec';
import { bundleSealsFailures, createWorker } from '../../src/worker';

const enc = new TextEncoder();
const dec = new TextDecoder();
const key = (byte: number) => Buffer.alloc(32, byte);
const json = (value: unknown): Payload => ({
  metadata: { encoding: enc.encode('json/plain') },
  data: enc.encode(JSON.stringify(value)),
});
const valueOf = (p: Payload) => JSON.parse(dec.decode(p.data!)) as unknown;

/**
 * Sealed once by this codec with key `golden-1` (32 bytes of 7) and committed: what a history
 * written today holds must open with every later version of the code.
 */
const GOLDEN_PAYLOAD =
  'SlhdQybyuUiGSbFVWv4D8JxgrhRZR5evFkpSr92CJB5PjP5p8cem8Z/CtkztWvE6kfKwylJ2AqH6kSIvN5J+bveazZtAHyG46ZzC2E2ZpYabFc8OPjrY/QKwJ1dRSSd9Yg==';
const GOLDEN_FIELD =
  'dpf1:golden-1:7JMBY+kUopl5k/8R2bMC1p4jsQvXNEOI8hA40KRLIzl9bK2BCUasM8Y4h0n29R3Mq3da3MUj6Jj0ZqlCFPOAiTxMjw==';

describe('the payload codec', () => {
  const codec = new EncryptionCodec(new Keyring([{ id: 'k1', key: key(1) }]));

  test('when a payload is encoded, then only its encoding and key id are readable, and decoding gives it back', async () => {
    const original = json({ subject: 'Coffee beans 1 kg', notify_url: 'https://shop.example/hook' });
    const [sealed] = await codec.encode([original]);
    expect(Object.keys(sealed!.metadata!).sort()).toEqual(['encoding', 'encryption-key-id']);
    expect(dec.decode(sealed!.metadata!.encoding!)).toBe('binary/encrypted');
    expect(dec.decode(sealed!.metadata!['encryption-key-id']!)).toBe('k1');
    expect(Buffer.from(sealed!.data!).toString('latin1')).not.toContain('Coffee');
    expect(isEncryptedPayload(sealed!)).toBe(true);
    const [opened] = await codec.decode([sealed!]);
    expect(dec.decode(opened!.metadata!.encoding!)).toBe('json/plain');
    expect(valueOf(opened!)).toEqual({
      subject: 'Coffee beans 1 kg',
      notify_url: 'https://shop.example/hook',
    });
  });

  test('when a large payload repeats itself, then it is compressed before it is sealed and still opens', async () => {
    const big = json({ items: Array.from({ length: 200 }, (_, i) => ({ sku: `SKU-${i % 5}`, qty: 1 })) });
    const [sealed] = await codec.encode([big]);
    expect(sealed!.data!.length).toBeLessThan(big.data!.length / 4);
    expect(valueOf((await codec.decode([sealed!]))[0]!)).toEqual(valueOf(big));
  });

  test('when a sealed payload would inflate past 4 MiB, then opening refuses it instead of filling memory', async () => {
    const bomb: Payload = {
      metadata: { encoding: enc.encode('binary/plain') },
      data: new Uint8Array(5 * 1024 * 1024),
    };
    const [sealed] = await codec.encode([bomb]);
    expect(sealed!.data!.length).toBeLessThan(64 * 1024);
    await expect(codec.decode([sealed!])).rejects.toThrow(/larger than|buffer|maxOutputLength|RangeError/i);
  });

  test('when the same payload is sealed twice, then the two ciphertexts differ (a fresh IV each time)', async () => {
    const [a, b] = await codec.encode([json({ a: 1 }), json({ a: 1 })]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  test('when a payload was not sealed by the codec (an older history), then decoding passes it through unchanged', async () => {
    const plain = json({ subject: 'before the codec' });
    const [out] = await codec.decode([plain]);
    expect(out).toBe(plain);
  });

  test('when keys rotate, then new payloads are sealed with the new key and old ones still open; without the old key, decoding names it', async () => {
    const [old] = await codec.encode([json({ n: 1 })]);
    const rotated = new EncryptionCodec(
      new Keyring([
        { id: 'k2', key: key(2) },
        { id: 'k1', key: key(1) },
      ]),
    );
    const [fresh] = await rotated.encode([json({ n: 2 })]);
    expect(dec.decode(fresh!.metadata!['encryption-key-id']!)).toBe('k2');
    expect(valueOf((await rotated.decode([old!]))[0]!)).toEqual({ n: 1 });
    const forgetful = new EncryptionCodec(new Keyring([{ id: 'k2', key: key(2) }]));
    await expect(forgetful.decode([old!])).rejects.toThrow(MissingKeyError);
    await expect(forgetful.decode([old!])).rejects.toThrow(/payload key k1/);
  });

  test('when a sealed payload is altered or opened with the wrong key, then decoding fails instead of giving garbage', async () => {
    const [sealed] = await codec.encode([json({ amount: 100 })]);
    const tampered = Buffer.from(sealed!.data!);
    tampered[20]! ^= 1;
    await expect(codec.decode([{ ...sealed!, data: tampered }])).rejects.toThrow();
    const impostor = new EncryptionCodec(new Keyring([{ id: 'k1', key: key(9) }]));
    await expect(impostor.decode([sealed!])).rejects.toThrow();
  });

  test('when the committed golden payload is opened, then it is the payload it was (the format is stable)', async () => {
    const golden = new EncryptionCodec(new Keyring([{ id: 'golden-1', key: key(7) }]));
    const sealed: Payload = {
      metadata: { encoding: enc.encode('binary/encrypted'), 'encryption-key-id': enc.encode('golden-1') },
      data: Buffer.from(GOLDEN_PAYLOAD, 'base64'),
    };
    const [opened] = await golden.decode([sealed]);
    expect(dec.decode(opened!.metadata!.encoding!)).toBe('json/plain');
    expect(valueOf(opened!)).toEqual({ subject: 'Coffee beans' });
    // The documented layout, read with nothing but node:crypto: salt (16) ‖ iv (12) ‖ AES-256-GCM
    // ciphertext ‖ tag (16), under HKDF-SHA256(payload key, salt, "durapay payload codec v1");
    // the plaintext is a format byte (0: stored) and the serialized Payload message.
    const raw = Buffer.from(GOLDEN_PAYLOAD, 'base64');
    const subkey = Buffer.from(
      hkdfSync('sha256', key(7), raw.subarray(0, 16), 'durapay payload codec v1', 32),
    );
    const decipher = createDecipheriv('aes-256-gcm', subkey, raw.subarray(16, 28));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const plain = Buffer.concat([decipher.update(raw.subarray(28, raw.length - 16)), decipher.final()]);
    expect(plain[0]).toBe(0);
    const message = temporal.api.common.v1.Payload.decode(plain.subarray(1));
    expect(dec.decode(message.data!)).toBe('{"subject":"Coffee beans"}');
  });
});

describe('the field sealer', () => {
  const sealer = new FieldSealer(new Keyring([{ id: 'k1', key: key(1) }]));

  test('when a value is sealed, then it names its key, hides the value, and opens only in the same context', () => {
    const sealed = sealer.seal({ id_card_number: '110101199003070000', name: 'Zhang San' }, 'ctx:a');
    expect(sealed).toMatch(/^dpf1:k1:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain('1101011990');
    expect(FieldSealer.keyIdOf(sealed)).toBe('k1');
    expect(sealer.open(sealed, 'ctx:a')).toEqual({ id_card_number: '110101199003070000', name: 'Zhang San' });
    expect(() => sealer.open(sealed, 'ctx:b')).toThrow();
  });

  test('when a value was sealed with a key no longer listed, then opening names the key', () => {
    const sealed = sealer.seal('x', 'c');
    expect(() => new FieldSealer(new Keyring([{ id: 'k2', key: key(2) }])).open(sealed, 'c')).toThrow(
      /payload key k1, which DURAPAY_PAYLOAD_KEYS does not list/,
    );
  });

  test('when the committed golden field is opened, then it is the value it was', () => {
    const golden = new FieldSealer(new Keyring([{ id: 'golden-1', key: key(7) }]));
    expect(golden.open(GOLDEN_FIELD, 'merchant_applications.submit_data:ma_1')).toEqual({
      id_card_number: '110101199003070000',
    });
  });
});

describe('payload keys', () => {
  test('when DURAPAY_PAYLOAD_KEYS lists keys, then the first is current and every one opens', () => {
    const a = newPayloadKeyEntry('2026-11');
    const b = newPayloadKeyEntry('2026-05');
    const ring = parsePayloadKeys(`${a}, ${b}`, 'test');
    expect(ring.current.id).toBe('2026-11');
    expect(ring.ids()).toEqual(['2026-11', '2026-05']);
  });

  test.each([
    ['', /holds no payload key/],
    ['nocolon', /entry 1 must be "id:base64 of 32 bytes"/],
    [`k1:${Buffer.alloc(16).toString('base64')}`, /payload key k1 must be 32 bytes/],
    [`bad id:${key(1).toString('base64')}`, /must be 1-32 characters/],
    [`k1:${key(1).toString('base64')},k1:${key(2).toString('base64')}`, /k1 is given twice/],
  ])('when the keys are %j, then the configuration is refused saying why', (text, message) => {
    expect(() => parsePayloadKeys(text, '"DURAPAY_PAYLOAD_KEYS"')).toThrow(message);
  });

  // Each entry holds key material the message must not repeat (the error reaches the logs).
  const short = Buffer.alloc(16, 0xab).toString('base64');
  const whole = Buffer.alloc(32, 0xcd).toString('base64');
  test.each([
    ['a key of 16 bytes', `k1:${short}`, short, /payload key k1 must be 32 bytes/],
    ['a key where the id goes', `${whole}:k1`, whole, /payload key id of entry 1 must be 1-32 characters/],
    ['a key given twice under one id', `k1:${whole},k1:${whole}`, whole, /k1 is given twice/],
  ])(
    'when %s is refused, then the message says why and never contains the key',
    (_what, text, secret, why) => {
      let error: unknown;
      try {
        parsePayloadKeys(text, '"DURAPAY_PAYLOAD_KEYS"');
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(why);
      expect((error as Error).message).not.toContain(secret);
      expect((error as Error).message).not.toContain(Buffer.from(secret, 'base64').toString('hex'));
    },
  );

  test('when production has no payload keys, then it refuses to start; development generates one key once and reuses it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-keys-'));
    try {
      expect(() =>
        resolvePayloadKeys(loadConfig({ DURAPAY_ENV: 'production', DURAPAY_DATA_DIR: dir })),
      ).toThrow(/"DURAPAY_PAYLOAD_KEYS" \(or "DURAPAY_PAYLOAD_KEYS_FILE"\) is required in production/);
      const dev = loadConfig({ DURAPAY_ENV: 'development', DURAPAY_DATA_DIR: dir });
      const first = resolvePayloadKeys(dev);
      const again = resolvePayloadKeys(dev);
      expect(again.current.key.equals(first.current.key)).toBe(true);
      expect(fs.statSync(path.join(dir, 'payload.keys')).mode & 0o777).toBe(0o600);
      const file = path.join(dir, 'keys.txt');
      fs.writeFileSync(file, `# rotated 2026-11\n${newPayloadKeyEntry('k9')}\n`);
      expect(resolvePayloadKeys(loadConfig({ DURAPAY_PAYLOAD_KEYS_FILE: file })).current.id).toBe('k9');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('durapay keys new', () => {
  test('when a new key is asked for, then it prints one entry DURAPAY_PAYLOAD_KEYS takes, fresh each time; a bad id is refused', () => {
    const bin = path.join(__dirname, '..', '..', 'bin', 'durapay.js');
    const make = () =>
      execFileSync(process.execPath, [bin, 'keys', 'new', '--id', '2026-11'], { encoding: 'utf8' });
    const [a, b] = [make(), make()];
    expect(a).toMatch(/^2026-11:[A-Za-z0-9+/]{43}=\n$/);
    expect(a).not.toBe(b);
    expect(parsePayloadKeys(`${a.trim()},${b.trim().replace('2026-11', '2026-05')}`, 'test').current.id).toBe(
      '2026-11',
    );
    expect(() =>
      execFileSync(process.execPath, [bin, 'keys', 'new', '--id', 'bad id'], {
        encoding: 'utf8',
        stdio: 'pipe',
      }),
    ).toThrow(/a key id must be 1-32 characters/);
  });
});

describe('the workflow bundle', () => {
  test('when a prebuilt bundle does not seal its failures (made by an older durapay), then the worker refuses it', async () => {
    expect(bundleSealsFailures('... "./src/platform/failure-converter.ts" ...')).toBe(true);
    expect(bundleSealsFailures('... "./dist/src/platform/failure-converter.js" ...')).toBe(true);
    await expect(
      createWorker({
        connection: {} as never,
        namespace: 'default',
        taskQueue: 'unused',
        activities: {} as never,
        workflowBundleCode: '/* a bundle without the failure converter */',
      }),
    ).rejects.toThrow(
      /made by an older durapay \(its failures are not sealed\): make it again with `durapay bundle`/,
    );
  });
});
