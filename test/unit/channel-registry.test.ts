/**
 * A channel is a folder under src/channels/ and one line in src/channels/registry.ts: the
 * registry's descriptors carry each channel's own settings into the configuration, and no
 * channel folder imports the registry back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CHANNEL_SETTINGS } from '../../src/channels/registry';

const CHANNELS_DIR = path.join(__dirname, '../../src/channels');

test('when the registry lists the channels, then the ones with settings of their own come in its order', () => {
  expect(CHANNEL_SETTINGS.map((c) => c.code)).toEqual(['wechatpay', 'alipay']);
  for (const { settings } of CHANNEL_SETTINGS) {
    expect(Object.keys(settings.schema).length).toBeGreaterThan(0);
  }
});

test('when a channel has settings, then every variable it validates is its own', () => {
  for (const { code, settings } of CHANNEL_SETTINGS) {
    for (const key of Object.keys(settings.schema))
      expect(key.startsWith(`${code.toUpperCase()}_`)).toBe(true);
  }
});

test('when a channel folder is read, then none of its files imports the registry', () => {
  const folders = fs
    .readdirSync(CHANNELS_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  expect(folders).toContain('sandbox');
  for (const folder of folders) {
    for (const file of fs.readdirSync(path.join(CHANNELS_DIR, folder)).filter((f) => f.endsWith('.ts'))) {
      const text = fs.readFileSync(path.join(CHANNELS_DIR, folder, file), 'utf8');
      expect({ file: `${folder}/${file}`, importsRegistry: /from '\.\.\/registry'/.test(text) }).toEqual({
        file: `${folder}/${file}`,
        importsRegistry: false,
      });
    }
  }
});
