/** WeChat Pay's onboarding port: a sub-merchant's applyment (applyment4sub) and its media. */
import { createHash } from 'node:crypto';
import { Multipart, Rsa } from 'wechatpay-axios-plugin';
import { ChannelError } from '../errors';
import type { ApplicationState, OnboardingPort } from '../ports';
import { applymentStateOf, checkApplyment, mediaMeta, submittedStateOf, toWireApplyment } from './applyment';
import type { WechatpayClient } from './client';

/**
 * Onboarding a sub-merchant (applyment4sub): images uploaded as media, the applyment submitted
 * with durapay's application_id as its business_code and its sensitive fields sealed, then
 * followed by business_code until it is FINISHED with the merchant's sub_mchid.
 */
export function wechatpayOnboarding(client: WechatpayClient): OnboardingPort {
  const port: OnboardingPort = {
    problemWith: (input) => {
      try {
        checkApplyment({ ...input, applicationId: '' });
        return undefined;
      } catch (err) {
        return err instanceof ChannelError ? err.message : String(err);
      }
    },
    uploadFile: async (_ctx, input) => {
      const meta = mediaMeta(input, createHash('sha256').update(input.content).digest('hex'));
      const form = new Multipart()
        .append('meta', JSON.stringify(meta))
        .append('file', input.content, meta.filename);
      const answer = await client.call('upload media', 'POST', 'v3/merchant/media/upload', form.getBuffer(), {
        headers: form.getHeaders() as Record<string, string>,
        meta,
      });
      const mediaId = (answer as { media_id?: unknown } | undefined)?.media_id;
      if (typeof mediaId !== 'string' || mediaId === '') {
        throw new ChannelError('invalid_response', 'WeChat Pay media upload answered without media_id');
      }
      return { fileId: mediaId };
    },
    submit: async (_ctx, input): Promise<ApplicationState> => {
      const sealer = await client.keyring.sealer();
      const body = toWireApplyment(input, (plain) => Rsa.encrypt(plain, sealer.key));
      // A retried submit finds the applyment its first try made, by business_code.
      const earlier = await findApplyment(client, input.applicationId);
      if (earlier) return earlier;
      try {
        return submittedStateOf(
          await client.call('submit applyment', 'POST', 'v3/applyment4sub/applyment/', body, {
            headers: { 'Wechatpay-Serial': sealer.serial },
          }),
        );
      } catch (err) {
        // No trustworthy answer: WeChat Pay may have taken it. Look before saying it failed.
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await findApplyment(client, input.applicationId).catch(() => undefined);
        if (!found) throw err;
        return found;
      }
    },
    query: async (_ctx, applicationId): Promise<ApplicationState> => {
      const found = await findApplyment(client, applicationId);
      if (!found) {
        throw new ChannelError('refused', `WeChat Pay has no applyment with business_code ${applicationId}`);
      }
      return found;
    },
  };
  return port;
}

/** The applyment of a business_code, or undefined when WeChat Pay has none. */
async function findApplyment(
  client: WechatpayClient,
  businessCode: string,
): Promise<ApplicationState | undefined> {
  const answer = await client.call(
    'query applyment',
    'GET',
    `v3/applyment4sub/applyment/business_code/${encodeURIComponent(businessCode)}`,
    undefined,
    { notFoundCode: 'RESOURCE_NOT_EXISTS' },
  );
  return answer === undefined ? undefined : applymentStateOf(answer);
}
