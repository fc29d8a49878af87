import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  cachedCliPath,
  devServerArgs,
  findTemporalCli,
  TEMPORAL_CLI_VERSION,
} from '../../src/cli/dev/temporal-cli';

describe('Temporal CLI provisioning', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-cli-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('when TEMPORAL_CLI_PATH names an executable, then it is used first', () => {
    const exe = path.join(tmp, 'my-temporal');
    fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
    expect(findTemporalCli({ cliPath: exe, cacheDir: tmp })).toBe(exe);
  });

  test('when TEMPORAL_CLI_PATH names no executable, then it fails naming the variable', () => {
    expect(() => findTemporalCli({ cliPath: path.join(tmp, 'missing'), cacheDir: tmp })).toThrow(
      /TEMPORAL_CLI_PATH/,
    );
  });

  test('when a binary sits in the cache, then the cache path is pinned to the version', () => {
    expect(cachedCliPath('/c')).toBe(`/c/temporal-${TEMPORAL_CLI_VERSION}/temporal`);
    expect(TEMPORAL_CLI_VERSION).toBe('1.5.1');
  });

  test('when the dev server starts, then it persists state and registers every search attribute', () => {
    const args = devServerArgs({
      cliPath: 't',
      port: 7233,
      uiPort: 8233,
      dbFile: '/d/temporal.sqlite',
      logFile: '/d/t.log',
      namespace: 'default',
    });
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(args.join(' ')).toContain('--db-filename /d/temporal.sqlite');
    expect(args.join(' ')).toContain('--ui-port 8233');
    for (const name of ['AppId', 'TradeNo', 'MerchantOrderNo', 'MerchantId', 'ChannelCode', 'BizStatus']) {
      expect(args).toContain(`${name}=Keyword`);
    }
    expect(args).not.toContain('--namespace');
    // Tuned for one machine: WAL journal, and task dispatch not throttled to 20 reads a second.
    expect(args.join(' ')).toContain('--sqlite-pragma journal_mode=wal');
    expect(args.join(' ')).toContain('--sqlite-pragma synchronous=normal');
    expect(args.join(' ')).toContain('--dynamic-config-value history.transferProcessorMaxPollRPS=2000');
    expect(args.join(' ')).toContain('--dynamic-config-value matching.numTaskqueueReadPartitions=1');
    expect(
      devServerArgs({ cliPath: 't', port: 1, uiPort: 2, dbFile: 'f', logFile: 'l', namespace: 'pay' }),
    ).toEqual(expect.arrayContaining(['--namespace', 'pay']));
  });
});
