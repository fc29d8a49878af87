import { resolveMasterKey } from '../../platform/crypto/master-key';
import {
  offlineUpstream,
  serveChannelSandbox,
  serveSandboxUpstream,
  upstreamCodes,
} from '../../sandbox-hook';
import { boot } from '../boot';
import { fail } from '../config';
import { withDatabase } from '../database';

/** `durapay sandbox [channel]`. */
export async function sandbox(
  channel: string,
  opts: { port?: string; keys?: string; platformCertificates?: boolean },
): Promise<void> {
  const { config, logger } = boot('sandbox');
  const upstream = channel === 'sandbox' ? undefined : offlineUpstream(channel);
  if (channel !== 'sandbox' && !upstream) {
    fail(`the channel must be sandbox or one with an offline upstream: ${upstreamCodes().join(', ')}`);
  }
  const port = Number(opts.port ?? upstream?.defaultPort ?? 8090);
  if (!Number.isInteger(port) || port < 1 || port > 65535) fail('--port must be a port number');
  if (upstream) {
    const running = await serveChannelSandbox(
      config,
      upstream,
      {
        port,
        host: '127.0.0.1',
        keyDir: opts.keys,
        // WeChat Pay's older mode; other upstreams have no such option and ignore it.
        options: opts.platformCertificates ? { platformIdentity: 'certificate' } : {},
      },
      logger,
    ).catch(fail);
    console.error(`${upstream.title} on ${running.url}${upstream.entry}`);
    console.error('durapay settings for it (the API and the worker):');
    for (const [key, value] of Object.entries(running.settings)) console.error(`  ${key}=${value}`);
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await running.close();
    process.exit(0);
  }
  const masterKey = resolveMasterKey(config);
  await withDatabase(config, logger, async (db) => {
    const upstream = await serveSandboxUpstream(
      config,
      masterKey,
      db,
      { port, host: '127.0.0.1' },
      logger.child({ component: 'sandbox' }),
    );
    console.error(`sandbox channel on ${upstream.url} (set SANDBOX_BASE_URL to this for the API and worker)`);
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await upstream.close();
  }).catch(fail);
  process.exit(0);
}
