/**
 * The statements port (src/channels/ports.ts) is a contract for reconciliation, not a feature:
 * no channel offers it yet, and asking for it answers not_supported rather than pretending.
 */
import { randomBytes } from 'node:crypto';
import { ChannelError } from '../../src/channels/errors';
import { portOf } from '../../src/channels/ports';
import { channelsFromConfig } from '../../src/channels/registry';
import { loadConfig } from '../../src/config';

test('when a configured channel is asked for its statements, then it has none and the answer is not_supported', () => {
  const registry = channelsFromConfig(loadConfig({ DURAPAY_ENV: 'test' }), randomBytes(32));
  const codes = registry.codes();
  expect(codes).toContain('sandbox');
  for (const code of codes) {
    const channel = registry.get(code)!;
    expect(channel.statements).toBeUndefined();
    expect(() => portOf(channel, 'statements')).toThrow(
      new ChannelError('not_supported', `channel ${code} does not support statements`),
    );
  }
});
