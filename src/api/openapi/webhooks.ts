import { DATA_SCHEMAS } from './response-schemas';

type Schema = Record<string, unknown>;

/** A resource as its query endpoint returns it, plus the `app_id` a notification adds. */
function withAppId(resource: string): Schema {
  const schema = DATA_SCHEMAS[resource] as { required: string[]; properties: Record<string, Schema> };
  return {
    ...schema,
    description: `The ${resource.toLowerCase()} as its query endpoint returns it, plus \`app_id\`.`,
    required: [...schema.required, 'app_id'],
    properties: { ...schema.properties, app_id: { type: 'string', examples: ['app_abcdefghijklmnop'] } },
  };
}

/** SPEC §6: what durapay posts to a `notify_url`. */
export function webhooks(): Schema {
  const events: [string, string, string][] = [
    ['payment.succeeded', 'Order', 'An order was paid.'],
    ['payment.closed', 'Order', 'An order was closed, by request or at its expiry.'],
    ['refund.succeeded', 'Refund', 'A refund succeeded.'],
    ['refund.failed', 'Refund', 'A refund failed; its amount is refundable again.'],
    [
      'refund.abnormal',
      'Refund',
      "A refund's money left the order but the buyer's account could not take it: pay it out another way.",
    ],
    ['merchant.application.updated', 'Application', 'An onboarding application changed.'],
    [
      'merchant.channel_account.updated',
      'MerchantChannelAccount',
      "A merchant's authorisation of this app at a channel was saved, or it expired and could not be refreshed.",
    ],
    ['transfer.succeeded', 'Transfer', 'A transfer reached its payee.'],
    ['transfer.failed', 'Transfer', 'A transfer failed; nothing was paid (or the money came back).'],
    ['transfer.cancelled', 'Transfer', 'A transfer was cancelled, or its payee did not confirm it in time.'],
    [
      'reconciliation.completed',
      'ReconciliationRun',
      "A day's reconciliation of an account finished (its summary).",
    ],
    [
      'reconciliation.mismatch',
      'ReconciliationMismatch',
      "A reconciliation found a difference between the channel's statement and durapay's books about one of the app's orders.",
    ],
  ];
  const header = (name: string, description: string, example: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
    example,
  });
  return Object.fromEntries(
    events.map(([type, resource, description]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/\./g, '_')}`,
          tags: ['Notifications'],
          summary: type,
          description: `${description} Delivered when any 2xx answers within 10 s (redirects are not followed); otherwise retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed. Verify with any Standard Webhooks library and the app's \`webhook_secret\`.`,
          parameters: [
            header(
              'webhook-id',
              "The notification's id, the same on every retry.",
              'ntf_01JD4W6Y7Z8A9B0C1D2E3F4G5H',
            ),
            header('webhook-timestamp', 'Unix seconds of this attempt.', '1763789462'),
            header(
              'webhook-signature',
              "`v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` under the base64-decoded part of the app's `webhook_secret` after `whsec_`.",
              'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            ),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'data'],
                  properties: {
                    type: { const: type },
                    timestamp: { type: 'string', format: 'date-time' },
                    data: withAppId(resource),
                  },
                },
              },
            },
          },
          responses: { '2XX': { description: 'Delivered.' } },
        },
      },
    ]),
  );
}
