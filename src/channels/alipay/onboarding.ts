/** Alipay's onboarding port: a secondary merchant (直付通 zftorder), its images and its query. */
import { AlipayFormData } from 'alipay-sdk';
import { ChannelError } from '../errors';
import type { ApplicationState, OnboardingPort } from '../ports';
import type { AlipayClient } from './client';
import { beijingTime, zftStateOf } from './transformers';
import { imageTypeOf, toWireZft } from './zft';

/**
 * Secondary merchants (直付通): images uploaded for ids, the application created with durapay's
 * application_id as its external_id, then followed by it until Alipay finishes it with an smid.
 */
export function alipayOnboarding(client: AlipayClient): OnboardingPort {
  const port: OnboardingPort = {
    problemWith: (input) => {
      try {
        toWireZft({ ...input, applicationId: 'check' });
        return undefined;
      } catch (err) {
        return err instanceof ChannelError ? err.message : String(err);
      }
    },
    uploadFile: async (_ctx, input) => {
      const form = new AlipayFormData();
      form.addField('image_type', imageTypeOf(input));
      form.addField('timestamp', beijingTime(new Date()));
      form.addFile('image_content', input.fileName || 'image', input.content);
      const answer = await client.call('upload image', 'ant.merchant.expand.indirect.image.upload', {}, form);
      return { fileId: client.field(answer, 'image_id', 'image upload') };
    },
    submit: async (_ctx, input): Promise<ApplicationState> => {
      const body = toWireZft(input);
      // A retried submit finds the application its first try made, by external_id.
      const earlier = await findZft(client, input.applicationId);
      if (earlier) return earlier;
      try {
        const answer = await client.call(
          'create secondary merchant',
          'ant.merchant.expand.indirect.zft.create',
          {
            bizContent: body,
          },
        );
        const orderId = client.field(answer, 'order_id', 'secondary merchant create');
        return zftStateOf({ order_id: orderId, status: '' });
      } catch (err) {
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await findZft(client, input.applicationId).catch(() => undefined);
        if (!found) throw err;
        return found;
      }
    },
    query: async (_ctx, applicationId): Promise<ApplicationState> => {
      const found = await findZft(client, applicationId);
      if (!found)
        throw new ChannelError('refused', `Alipay has no application with external_id ${applicationId}`);
      return found;
    },
  };
  return port;
}

async function findZft(client: AlipayClient, applicationId: string): Promise<ApplicationState | undefined> {
  const answer = await client.call(
    'query secondary merchant',
    'ant.merchant.expand.indirect.zftorder.query',
    {
      bizContent: { external_id: applicationId },
    },
  );
  const orders = Array.isArray(answer?.orders) ? (answer.orders as Record<string, unknown>[]) : [];
  // Only this application's order: another's smid would route this merchant's money elsewhere.
  const order = orders.find((o) => o?.external_id === applicationId);
  return order === undefined ? undefined : zftStateOf(order);
}
