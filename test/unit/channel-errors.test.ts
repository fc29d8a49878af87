import { ApplicationFailure } from '@temporalio/common';
import {
  ChannelError,
  channelFailure,
  toActivityFailure,
  type ChannelErrorKind,
  type ChannelOperation,
} from '../../src/channels/errors';
import { portOf, type Channel } from '../../src/channels/ports';
import { createChannelRegistry, type ChannelFactory } from '../../src/channels/registry';

describe('channel failures', () => {
  // What the API answers today (SPEC §3, §5): a refused close or query leaves the outcome unknown.
  const refusedCode: [ChannelOperation, string][] = [
    ['create', 'channel_create_fail'],
    ['query', 'channel_timeout'],
    ['close', 'channel_timeout'],
    ['refund', 'channel_refund_fail'],
    ['refund_query', 'channel_refund_fail'],
    ['profit_share', 'channel_create_fail'],
    ['onboarding', 'internal_system'],
  ];

  test.each(refusedCode)('when the channel refuses a %s, then it is %s and final', (operation, code) => {
    for (const kind of ['refused', 'invalid_response'] as ChannelErrorKind[]) {
      expect(channelFailure(new ChannelError(kind, 'no'), operation)).toEqual({
        code,
        retryable: false,
        message: 'no',
      });
    }
  });

  test.each(refusedCode.map(([operation]) => operation))(
    'when the channel cannot be reached for a %s, then the activity may try again',
    (operation) => {
      for (const kind of ['unreachable', 'timeout'] as ChannelErrorKind[]) {
        const failure = channelFailure(new ChannelError(kind, 'down'), operation);
        expect(failure.retryable).toBe(true);
        expect(failure.code).toBe(operation === 'onboarding' ? 'internal_system' : 'channel_timeout');
        expect(failure.message).toBe(operation === 'onboarding' ? 'down' : 'channel unreachable: down');
      }
      expect(channelFailure(new Error('bug'), operation)).toMatchObject({ retryable: true, message: 'bug' });
    },
  );

  test('when an operation is not offered, then payments answer channel_not_support and onboarding internal_system', () => {
    const missing = new ChannelError('not_supported', 'channel x does not support refunds');
    expect(channelFailure(missing, 'refund')).toMatchObject({
      code: 'channel_not_support',
      retryable: false,
    });
    expect(channelFailure(missing, 'onboarding')).toMatchObject({
      code: 'internal_system',
      retryable: false,
    });
  });

  test('when it becomes an activity failure, then its type is the SPEC code and a coded failure passes as is', () => {
    const refused = toActivityFailure(new ChannelError('refused', 'no'), 'refund');
    expect({ type: refused.type, nonRetryable: refused.nonRetryable }).toEqual({
      type: 'channel_refund_fail',
      nonRetryable: true,
    });
    const coded = ApplicationFailure.nonRetryable('gone', 'order_not_found');
    expect(toActivityFailure(coded, 'create')).toBe(coded);
  });
});

describe('channel registry and ports', () => {
  const channel = (code: string, account: string): Channel =>
    ({
      code,
      capabilities: { payMethods: ['qr_code'], maxAmount: 1, currency: 'CNY' },
      payments: { account },
    }) as unknown as Channel;
  const factory = (code: string, accounts: string[]): ChannelFactory => ({
    code,
    accounts,
    create: (account) => channel(code, account),
  });

  test('when no account is named, then the first configured one answers; an unknown one is absent', () => {
    const registry = createChannelRegistry([factory('pay', ['main', 'second'])]);
    expect(registry.get('pay')?.payments).toEqual({ account: 'main' });
    expect(registry.get('pay', 'second')?.payments).toEqual({ account: 'second' });
    expect(registry.get('pay', 'third')).toBeUndefined();
    expect(registry.get('other')).toBeUndefined();
    expect(registry.codes()).toEqual(['pay']);
  });

  test('when a channel is configured twice, then the registry refuses to start', () => {
    expect(() => createChannelRegistry([factory('pay', ['a']), factory('pay', ['b'])])).toThrow(/twice/);
  });

  test('when a channel leaves a capability out, then asking for its port is a not_supported ChannelError', () => {
    const err = (() => {
      try {
        portOf(channel('pay', 'main'), 'refunds');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ChannelError);
    expect(err).toMatchObject({ kind: 'not_supported', message: 'channel pay does not support refunds' });
  });
});
