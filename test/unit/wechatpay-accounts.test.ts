/**
 * durapay's WeChat Pay adapter confirming a claimed sub_mchid (its wire through
 * wechatpay-axios-plugin, request signing and answer verification on) against the offline v3
 * sandbox's settlement account read (查询结算账户): the service provider's sub-merchants are
 * confirmed, another's (19999…, or a prefix the sandbox is told) refused with WeChat Pay's code.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  createWechatpaySandbox,
  generateWechatpaySandboxKeys,
  type WechatpaySandbox,
  type WechatpaySandboxKeys,
} from '../../sandbox/wechatpay';
import { ChannelError, type ChannelErrorKind } from '../../src/channels/errors';
import { WechatpayChannel } from '../../src/channels/wechatpay';
import { JPEG_BYTES, PNG_BYTES, applymentData } from '../support/wechatpay-applyment';
import { freePort } from '../support/ports';

jest.setTimeout(30_000);

let keys: WechatpaySandboxKeys;
/** Default options: 19999… stands for another service provider's sub-merchants. */
let sandbox: WechatpaySandbox;
/** Told that 16… (the numbers its applyments give out) are another's too. */
let strict: WechatpaySandbox;
let server: http.Server;
let channel: WechatpayChannel;
let strictChannel: WechatpayChannel;

function adapter(base: string): WechatpayChannel {
  return new WechatpayChannel({
    baseUrl: base,
    spMchid: keys.spMchid,
    spAppid: keys.spAppid,
    merchantSerial: keys.merchantSerial,
    merchantPrivateKey: keys.merchantPrivateKeyPem,
    apiV3Key: keys.apiV3Key,
    publicKeyId: keys.platformPublicKeyId,
    publicKey: keys.platformPublicKeyPem,
    timeoutMs: 5_000,
  });
}

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox = createWechatpaySandbox({ keys, publicBaseUrl: `${origin}/wechatpay` });
  strict = createWechatpaySandbox({
    keys,
    publicBaseUrl: `${origin}/strict`,
    foreignSubMchidPrefixes: ['19999', '16'],
  });
  app.use('/wechatpay', sandbox.router);
  app.use('/strict', strict.router);
  channel = adapter(`${origin}/wechatpay`);
  strictChannel = adapter(`${origin}/strict`);
});

afterAll(async () => {
  sandbox.close();
  strict.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function refusal(promise: Promise<unknown>): Promise<ChannelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ChannelError)) throw new Error(`expected a ChannelError, got ${String(err)}`);
  return err;
}

/** A sub-merchant onboarded through the adapter at a sandbox: its sub_mchid once FINISHED. */
async function onboarded(through: WechatpayChannel): Promise<string> {
  const upload = async (fileName: string, mediaType: string, content: Buffer) =>
    (await through.onboarding.uploadFile({}, { fileName, mediaType, content })).fileId;
  const media = {
    licenseCopy: await upload('license.png', 'image/png', PNG_BYTES),
    idCardCopy: await upload('front.jpg', 'image/jpeg', JPEG_BYTES),
    idCardNational: await upload('back.jpg', 'image/jpeg', JPEG_BYTES),
  };
  const applicationId = `apl_${randomBytes(10).toString('hex')}`;
  await through.onboarding.submit(
    {},
    {
      applicationId,
      merchant: { merchantId: 'M1', merchantName: 'Tea House' },
      submitData: applymentData(media),
    },
  );
  for (let i = 0; i < 5; i++) {
    const state = await through.onboarding.query({}, applicationId);
    if (state.status === 'finished' && state.subMerchantNo) return state.subMerchantNo;
  }
  throw new Error(`applyment ${applicationId} did not finish`);
}

describe('confirming a sub_mchid', () => {
  test('when the sub_mchid is one the service provider sells for, then it is confirmed as the account number', async () => {
    await expect(channel.accounts.confirm({}, { kind: 'sub_mchid', value: '1900000109' })).resolves.toEqual({
      accountNo: '1900000109',
    });
  });

  test('when the sub_mchid is another service provider’s, then it is refused with WeChat Pay’s code and message', async () => {
    const err = await refusal(channel.accounts.confirm({}, { kind: 'sub_mchid', value: '1999900001' }));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toContain('1999900001');
    expect(err.message).toMatch(/NO_AUTH: .*not a sub-merchant of this service provider/);
  });

  test('when the sub_mchid was issued by the service provider’s applyment, then it is confirmed even under a foreign prefix, and a made-up one with that prefix is not', async () => {
    const subMchid = await onboarded(strictChannel);
    expect(subMchid).toMatch(/^16\d{8}$/);
    await expect(strictChannel.accounts.confirm({}, { kind: 'sub_mchid', value: subMchid })).resolves.toEqual(
      {
        accountNo: subMchid,
      },
    );
    const madeUp = subMchid === '1600000001' ? '1600000002' : '1600000001';
    const err = await refusal(strictChannel.accounts.confirm({}, { kind: 'sub_mchid', value: madeUp }));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toContain('NO_AUTH');
  });

  test('when the claim is not a sub_mchid or not a merchant number, then it is refused without a call', async () => {
    for (const claim of [
      { kind: 'smid', value: '2088000000000001' } as const,
      { kind: 'sub_mchid', value: '../certificates' } as const,
    ]) {
      const err = await refusal(channel.accounts.confirm({}, claim));
      expect(err.kind).toBe<ChannelErrorKind>('refused');
    }
  });

  test('when WeChat Pay cannot be reached, then the confirmation is unreachable, not refused', async () => {
    const closed = adapter(`http://127.0.0.1:${await freePort()}/wechatpay`);
    const err = await refusal(closed.accounts.confirm({}, { kind: 'sub_mchid', value: '1900000109' }));
    expect(err.kind).toBe<ChannelErrorKind>('unreachable');
  });
});
