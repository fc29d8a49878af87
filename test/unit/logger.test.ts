import { PassThrough } from 'node:stream';
import { createLogger } from '../../src/platform/logger';
import { WinstonTemporalLogger } from '../../src/platform/temporal';

function capture(level = 'debug') {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString()));
  const logger = createLogger({ level, stream });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines };
}

describe('logger', () => {
  test('when a line is logged, then it is one JSON object with level, message and timestamp', () => {
    const { logger, lines } = capture();
    logger.info('hello', { trade_no: 'P1' });
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        message: 'hello',
        trade_no: 'P1',
        timestamp: expect.any(String),
      }),
    ]);
  });

  test('when metadata holds secrets, at any depth, then they are redacted', () => {
    const { logger, lines } = capture();
    logger.info('creds', {
      secret: 's3cr3t-top',
      webhook_secret: 'whsec_abc',
      headers: { authorization: 'Bearer t0k3n', signature: 'sig1=:abc:', 'content-type': 'application/json' },
      nested: [{ password: 'hunter2', access_token: 'tok' }],
    });
    const text = JSON.stringify(lines());
    for (const secret of ['s3cr3t-top', 'whsec_abc', 't0k3n', 'sig1=:abc:', 'hunter2', '"tok"']) {
      expect(text).not.toContain(secret);
    }
    expect(lines()[0]).toMatchObject({
      secret: '[redacted]',
      headers: { 'content-type': 'application/json', authorization: '[redacted]' },
    });
  });

  test('when the Temporal SDK logs below the level, then nothing is formatted or written', () => {
    const { logger, lines } = capture('info');
    const format = jest.spyOn(logger, 'log');
    const sdk = new WinstonTemporalLogger(logger);
    sdk.debug('Workflow started', { workflowId: 'w1' });
    sdk.trace('Activity completed', { activityId: '1' });
    expect(format).not.toHaveBeenCalled();
    sdk.warn('Activity failed', { activityId: '2' });
    expect(lines()).toEqual([
      expect.objectContaining({ level: 'warn', message: 'Activity failed', activityId: '2' }),
    ]);
  });

  test('when the bundler reports at INFO in quiet mode, then it is demoted to debug', () => {
    const { logger, lines } = capture('info');
    new WinstonTemporalLogger(logger, true).info('webpack compiled');
    expect(lines()).toEqual([]);
  });
});
