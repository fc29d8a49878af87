import { NOTIFICATION_EVENTS, type NotificationEvent } from '../../modules/notifications';
import { DATA_SCHEMAS } from './response-schemas';

type Schema = Record<string, unknown>;

/** What each event posts (the resource its data is) and when; one entry per event of the list. */
const EVENTS: Record<NotificationEvent, { resource: string; description: string }> = {
  'payment.succeeded': { resource: 'Order', description: 'An order was paid.' },
  'payment.closed': { resource: 'Order', description: 'An order was closed, by request or at its expiry.' },
  'refund.succeeded': { resource: 'Refund', description: 'A refund succeeded.' },
  'refund.failed': { resource: 'Refund', description: 'A refund failed; its amount is refundable again.' },
  'refund.abnormal': {
    resource: 'Refund',
    description:
      "A refund's money left the order but the buyer's account could not take it: pay it out another way.",
  },
  'merchant.application.updated': {
    resource: 'Application',
    description: 'An onboarding application changed.',
  },
  'merchant.channel_account.updated': {
    resource: 'MerchantChannelAccount',
    description:
      "A merchant's authorisation of this app at a channel was saved, or it expired and could not be refreshed.",
  },
  'transfer.succeeded': { resource: 'Transfer', description: 'A transfer reached its payee.' },
  'transfer.failed': {
    resource: 'Transfer',
    description: 'A transfer failed; nothing was paid (or the money came back).',
  },
  'transfer.cancelled': {
    resource: 'Transfer',
    description: 'A transfer was cancelled, or its payee did not confirm it in time.',
  },
  'reconciliation.completed': {
    resource: 'ReconciliationRun',
    description: "A day's reconciliation of an account finished (its summary).",
  },
  'reconciliation.mismatch': {
    resource: 'ReconciliationMismatch',
    description:
      "A reconciliation found a difference between the channel's statement and durapay's books about one of the app's orders.",
  },
  'complaint.created': {
    resource: 'ComplaintEvent',
    description: "A payer complained about one of the app's orders.",
  },
  'complaint.updated': {
    resource: 'ComplaintEvent',
    description: 'A complaint changed: its state, the negotiation, a reply, a refund, a continued complaint.',
  },
  'complaint.reply_due': {
    resource: 'ComplaintEvent',
    description: 'Nobody has replied to a complaint 12 hours after it was made: the reply is due within 24.',
  },
  'complaint.overdue': {
    resource: 'ComplaintEvent',
    description:
      'A complaint passed a deadline (no reply in 24 hours, or not processed in 72) and is not processed.',
  },
  'contract.signed': {
    resource: 'Contract',
    description: 'The buyer signed a recurring contract: it is active.',
  },
  'contract.cancelled': {
    resource: 'Contract',
    description:
      'A contract was cancelled, by the app or by the buyer at the channel; nothing is deducted after it.',
  },
  'contract.deduction_failed': {
    resource: 'Contract',
    description:
      "A period's deduction failed after its last retry in the window; `last_failure` says why (the channel's reason).",
  },
  'contract.ended': {
    resource: 'Contract',
    description: "A contract's plan is complete (its count or total amount).",
  },
};

/**
 * A resource as its query endpoint returns it, plus the `app_id` a notification adds; a resource
 * posted in part (a complaint, without its personal data) says so in its own description.
 */
function withAppId(resource: string): Schema {
  const schema = DATA_SCHEMAS[resource] as {
    required: string[];
    properties: Record<string, Schema>;
    description?: string;
  };
  const own = resource.endsWith('Event') ? schema.description : undefined;
  return {
    ...schema,
    description: own
      ? `${own} Plus \`app_id\`.`
      : `The ${resource.toLowerCase()} as its query endpoint returns it, plus \`app_id\`.`,
    required: [...schema.required, 'app_id'],
    properties: { ...schema.properties, app_id: { type: 'string', examples: ['app_abcdefghijklmnop'] } },
  };
}

/** SPEC §6: what durapay posts to a `notify_url`, in the order of the list of events. */
export function webhooks(): Schema {
  const header = (name: string, description: string, example: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
    example,
  });
  return Object.fromEntries(
    NOTIFICATION_EVENTS.map((type) => ({ type, ...EVENTS[type] })).map(({ type, resource, description }) => [
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
