/**
 * The statements port (src/channels/ports.ts) as the registry hands it out: the sandbox offers
 * statements (WeChat Pay's tradebill format), and a channel that leaves the port out answers
 * not_supported rather than pretending.
 */
import { randomBytes } from 'node:crypto';
import { ChannelError } from '../../src/channels/errors';
import { portOf, type Channel } from '../../src/channels/ports';
import { channelsFromConfig } from '../../src/channels/registry';
import { loadConfig } from '../../src/config';

test('when the configured sandbox is asked for its statements, then it has a port that fetches and parses', () => {
  const registry = channelsFromConfig(loadConfig({ DURAPAY_ENV: 'test' }), randomBytes(32));
  const statements = portOf(registry.get('sandbox')!, 'statements');
  expect(typeof statements.fetch).toBe('function');
  expect(typeof statements.parse).toBe('function');
});

test('when a channel without statements is asked for them, then the answer is not_supported', () => {
  const registry = channelsFromConfig(loadConfig({ DURAPAY_ENV: 'test' }), randomBytes(32));
  const sandbox = registry.get('sandbox')!;
  const without: Channel = { code: 'bare', capabilities: sandbox.capabilities, payments: sandbox.payments };
  expect(() => portOf(without, 'statements')).toThrow(
    new ChannelError('not_supported', 'channel bare does not support statements'),
  );
});
