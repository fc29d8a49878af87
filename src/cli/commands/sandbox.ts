import { resolveMasterKey } from '../../platform/crypto/master-key';
import { serveAlipaySandbox, serveSandboxUpstream, serveWechatpaySandbox } from '../../sandbox-hook';
import { boot } from '../boot';
import { fail } from '../config';
import { withDatabase } from '../database';

/** `durapay sandbox [channel]`. */
export async function sandbox(
  channel: string,
  opts: { port?: string; keys?: string; platformCertificates?: boolean },
): Promise<void> {
  const { config, logger } = boot('sandbox');
  if (channel !== 'sandbox' && channel !== 'wechatpay' && channel !== 'alipay') {
    fail('the channel must be sandbox, wechatpay or alipay');
  }
  const port = Number(opts.port ?? { sandbox: '8090', wechatpay: '8091', alipay: '8092' }[channel]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) fail('--port must be a port number');
  if (channel === 'alipay') {
    const gateway = await serveAlipaySandbox(
      config,
      { port, host: '127.0.0.1', keyDir: opts.keys },
      logger,
    ).catch(fail);
    console.error(`offline Alipay gateway on ${gateway.url}/gateway.do`);
    console.error('durapay settings for it (the API and the worker):');
    for (const [key, value] of Object.entries(gateway.settings)) console.error(`  ${key}=${value}`);
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await gateway.close();
    process.exit(0);
  }
  if (channel === 'wechatpay') {
    const upstream = await serveWechatpaySandbox(
      config,
      {
        port,
        host: '127.0.0.1',
        keyDir: opts.keys,
        platformIdentity: opts.platformCertificates ? 'certificate' : 'public_key',
      },
      logger,
    ).catch(fail);
    console.error(`offline WeChat Pay v3 sandbox on ${upstream.url}`);
    console.error('durapay settings for it (the API and the worker):');
    for (const [key, value] of Object.entries(upstream.settings)) console.error(`  ${key}=${value}`);
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await upstream.close();
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
