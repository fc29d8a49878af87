/**
 * Where a simulated upstream keeps the credentials it made up: a JSON file that is the truth, and
 * beside it the PEM (or key) files that durapay's *_FILE settings name, every one mode 0600 and
 * written whole. A development stack's settings therefore survive a restart.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface KeyStore<K> {
  /** Saves the keys as JSON plus their companion files. */
  save(dir: string, keys: K): void;
  /** The keys saved in `dir`, or undefined when none are; throws on a file that is not ours. */
  load(dir: string): K | undefined;
  /**
   * The keys saved in `dir`, or new ones saved there. A damaged file is an error rather than
   * replaced: new keys would silently invalidate the settings a stack was started with.
   */
  loadOrCreate(dir: string): K;
}

export function keyStore<K>(spec: {
  /** The JSON file's name. */
  file: string;
  /** The files the *_FILE settings name, and what each holds. */
  companions: (keys: K) => Record<string, string>;
  /** The JSON's content as keys, or an error naming `file`. */
  check: (parsed: unknown, file: string) => K;
  generate: () => K;
}): KeyStore<K> {
  /** Writes through a temporary file, owner-only from its creation, so no reader sees half a key. */
  function writePrivately(file: string, content: string): void {
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temporary, file);
  }
  const companionFiles = (dir: string, keys: K): [string, string][] =>
    Object.entries(spec.companions(keys)).map(([name, content]) => [path.join(dir, name), content]);

  const store: KeyStore<K> = {
    save(dir, keys) {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const [file, content] of companionFiles(dir, keys)) writePrivately(file, content);
      // The JSON last: its presence is what marks the directory as complete.
      writePrivately(path.join(dir, spec.file), `${JSON.stringify(keys, null, 2)}\n`);
    },
    load(dir) {
      const file = path.join(dir, spec.file);
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (err) {
        if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
        throw err;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`${file} is not valid JSON`);
      }
      return spec.check(parsed, file);
    },
    loadOrCreate(dir) {
      const existing = store.load(dir);
      if (existing) {
        // The JSON is the truth; a PEM someone deleted comes back, since a *_FILE setting names it.
        for (const [file, content] of companionFiles(dir, existing)) {
          if (!fs.existsSync(file)) writePrivately(file, content);
        }
        return existing;
      }
      const keys = spec.generate();
      store.save(dir, keys);
      return keys;
    },
  };
  return store;
}

/** A made-up RSA 2048 key pair, PKCS#8 and SPKI PEM, as the upstreams' keys are. */
export function rsaKeyPair(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}
