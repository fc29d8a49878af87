// Longer than 300 lines on purpose: the data of every answer of the console's API in one place,
// as ./response-schemas.ts holds the app API's, so that the document and the conformance checks
// read one schema per resource.
/**
 * What the console's API answers (SPEC §12, docs/console.md), as JSON Schema. The console shows
 * the app API's views of orders, refunds, transfers, notifications, merchants and reconciliation
 * (./response-schemas.ts), with what only an operator sees across apps added (whose it is, the
 * flags and reasons an app's answer leaves out); its lists are keyset pages `{list, next}`.
 *
 * The lists an operator picks from (channels, statuses, roles, categories, events, the account
 * fields of each channel) are named schemas made from the server's own lists, so that the
 * console's menus are generated from this document (src/cli/dev/console-api.ts), never copied.
 */
import { CHANNEL_ACCOUNTS, CHANNEL_CODES } from '../../channels/registry';
import { APP_STATUSES, SCOPES } from '../../modules/apps';
import { EXCEPTION_KINDS, TIMELINE_KINDS } from '../../modules/console';
import { MERCHANT_STATUSES } from '../../modules/merchants';
import { NOTIFICATION_EVENTS, NOTIFICATION_STATUSES } from '../../modules/notifications';
import { OPERATOR_ROLES } from '../../modules/operators';
import { ORDER_STATUSES, SHARE_STEP_KINDS } from '../../modules/orders';
import {
  MISMATCH_STATES,
  RECONCILIATION_CATEGORIES,
  RESOLUTIONS,
  RUN_STATUSES,
} from '../../modules/reconciliation';
import { REFUND_STATUSES } from '../../modules/refunds';
import { TRANSFER_STATUSES } from '../../modules/transfers';
import { DATA_SCHEMAS, money, record, ref, text, textOrNull, time, timeOrNull } from './response-schemas';

type Schema = Record<string, unknown>;
type ObjectSchema = Schema & { required: string[]; properties: Record<string, Schema> };

/** The app API's schema of a resource, as an object schema to extend. */
const api = (name: string): ObjectSchema => DATA_SCHEMAS[name] as ObjectSchema;

/** A schema with more fields, every one of them always present, and without some. */
function extend(
  base: ObjectSchema,
  more: Record<string, Schema>,
  description: string,
  without: string[] = [],
) {
  const properties = { ...base.properties, ...more };
  for (const field of without) delete properties[field];
  return record(properties, description);
}

/** A keyset page of the console: `next` is the `after` of the page that follows, null at the end. */
const keysetPage = (item: string, description: string): Schema =>
  record(
    {
      list: { type: 'array', items: ref(item) },
      next: { ...textOrNull, description: 'The `after` of the next page; null on the last.' },
    },
    description,
  );

const enumOf = (values: readonly string[], description: string): Schema => ({
  type: 'string',
  enum: [...values],
  description,
});

/** The lists the console's menus are made from, each a named schema. */
const LISTS: Record<string, Schema> = {
  ChannelCode: enumOf(CHANNEL_CODES, 'Every channel durapay knows, as its registry lists them.'),
  OrderStatus: enumOf(ORDER_STATUSES, "An order's status (SPEC §3.2)."),
  RefundStatus: enumOf(REFUND_STATUSES, "A refund's status (SPEC §3.5)."),
  TransferStatus: enumOf(TRANSFER_STATUSES, "A transfer's status (SPEC §11)."),
  NotificationStatus: enumOf(NOTIFICATION_STATUSES, "A notification's delivery status (SPEC §6)."),
  NotificationEvent: enumOf(NOTIFICATION_EVENTS, 'The event types durapay notifies (SPEC §6).'),
  MerchantStatus: enumOf(MERCHANT_STATUSES, "A merchant's status (SPEC §5.2)."),
  RunStatus: enumOf(RUN_STATUSES, "A reconciliation run's status (SPEC §10)."),
  MismatchCategory: enumOf(RECONCILIATION_CATEGORIES, "A reconciliation finding's category (SPEC §10)."),
  MismatchState: enumOf(MISMATCH_STATES, 'Where a reconciliation finding stands.'),
  Resolution: enumOf(RESOLUTIONS, 'What an operator decided of a finding.'),
  OperatorRole: enumOf(OPERATOR_ROLES, "An operator's role: each may do what the one before may, and more."),
  AccountFields: {
    type: 'object',
    description:
      "The fields that name a merchant's account at each channel that has accounts, as each channel declares them: a property per channel, a property per field with its label as `title`.",
    required: CHANNEL_ACCOUNTS.map((c) => c.code),
    properties: Object.fromEntries(
      CHANNEL_ACCOUNTS.map(({ code, accounts }) => [
        code,
        {
          type: 'object',
          properties: Object.fromEntries(
            accounts.kinds.map((k) => [
              k.kind,
              {
                type: 'string',
                title: k.label,
                description: k.description,
                pattern: k.pattern.source,
                // A token is shown masked, beside the account it was confirmed for (`user_id`).
                ...(k.holds === 'token' ? { writeOnly: true } : {}),
              },
            ]),
          ),
          additionalProperties: false,
        },
      ]),
    ),
    additionalProperties: false,
  },
};

const operator = record(
  {
    operator_id: text,
    username: text,
    role: ref('OperatorRole'),
    totp_enabled: { type: 'boolean' },
    disabled: { type: 'boolean' },
    disabled_at: timeOrNull,
    created_at: time,
  },
  'An operator of the console.',
);

const figures = {
  orders: { type: 'integer', minimum: 0 },
  paid_orders: { type: 'integer', minimum: 0 },
  paid_amount: money,
  refunds: { type: 'integer', minimum: 0 },
  refunded_amount: money,
  conversion: {
    type: ['number', 'null'],
    minimum: 0,
    maximum: 1,
    description: 'Paid orders over orders, to four places; null without orders.',
  },
};

const date = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' };

const notification = extend(
  api('Notification'),
  { app_id: text },
  "A notification without its attempts, and whose app's it is.",
  ['attempts'],
);
const attempts = (api('Notification').properties.attempts as Schema) ?? {};

/** What the console adds to a complaint: whose it is, the channel account, and every action on it. */
const consoleComplaintFields: Record<string, Schema> = {
  app_id: textOrNull,
  account: text,
  actions: {
    type: 'array',
    description:
      'Every action asked of the complaint, by an app (`app:…`) or an operator (`operator:…`), oldest first.',
    items: record({
      actor: text,
      action: { type: 'string', enum: ['reply', 'refund', 'complete'] },
      outcome: { type: 'string', enum: ['done', 'repeated', 'refused'] },
      detail: { type: 'object' },
      at: { type: 'string', format: 'date-time' },
    }),
  },
};

/** The data of every answer of the console's API, by name. */
export const CONSOLE_DATA_SCHEMAS: Record<string, Schema> = {
  ...LISTS,

  // ---- the app API's views the console shows as they are ----
  Order: api('Order'),
  Refund: api('Refund'),
  RefundResult: api('RefundResult'),
  AbnormalRefundResult: api('AbnormalRefundResult'),
  Transfer: api('Transfer'),
  Notification: api('Notification'),
  ResentNotification: api('ResentNotification'),
  Merchant: api('Merchant'),
  ChannelAccount: DATA_SCHEMAS.ChannelAccount!,
  Application: api('Application'),
  ReconciliationRun: api('ReconciliationRun'),
  ReconciliationMismatch: api('ReconciliationMismatch'),

  // ---- the session and the operators ----
  Operator: operator,
  Session: record(
    {
      operator: ref('Operator'),
      csrf_token: { ...text, description: 'Send it as `X-CSRF-Token` on every change.' },
    },
    'The operator signed in, and the CSRF token of the session.',
  ),
  SignedOut: record({ signed_out: { const: true } }),
  SessionsEnded: record({ sessions_ended: { type: 'integer', minimum: 0 } }),
  OperatorPage: keysetPage('Operator', 'Operators, by username.'),
  OperatorAnswer: record({ operator: ref('Operator') }),
  OperatorWithPassword: {
    ...record({ operator: ref('Operator') }),
    properties: {
      operator: ref('Operator'),
      password: {
        ...text,
        description: 'The password the server made, shown this once; absent when one was given.',
      },
    },
  },
  AuditEntry: record(
    {
      id: { ...text, pattern: '^\\d{1,19}$' },
      at: time,
      operator_id: textOrNull,
      operator: { ...textOrNull, description: "The operator's username when it acted." },
      action: text,
      target_type: textOrNull,
      target_id: textOrNull,
      before: { description: 'The target before, as the console showed it; null when there was none.' },
      after: { description: 'The target after; null when there is none.' },
      outcome: { type: 'string', enum: ['succeeded', 'refused'] },
      error_code: textOrNull,
      client_ip: textOrNull,
      request_id: textOrNull,
    },
    'One action of an operator, done or refused.',
  ),
  AuditPage: keysetPage('AuditEntry', 'The audit log, newest first.'),

  // ---- the overview ----
  Overview: record(
    {
      time_zone: { ...text, examples: ['Asia/Shanghai'] },
      today: record({ date, ...figures }),
      days: {
        type: 'array',
        items: record({ date, ...figures }),
        description: 'The last 30 days, oldest first.',
      },
      by_channel: {
        type: 'array',
        items: record({ channel_code: text, pay_method: text, ...figures }),
        description: 'The same 30 days by channel and pay method.',
      },
      exceptions: {
        type: 'array',
        items: record({
          kind: { type: 'string', enum: [...EXCEPTION_KINDS] },
          count: { type: 'integer', minimum: 0 },
        }),
      },
    },
    'Today, the last 30 days and what waits for a person.',
  ),

  // ---- orders ----
  ConsoleOrder: extend(
    api('Order'),
    {
      app_id: text,
      needs_refund_review: {
        type: 'boolean',
        description: 'Paid after it closed: its money waits for an operator to refund it.',
      },
      notify_url: text,
      currency: { ...text, examples: ['CNY'] },
    },
    'An order, whose it is, and what only an operator sees.',
  ),
  ConsoleOrderPage: keysetPage('ConsoleOrder', 'Orders, newest first.'),
  ShareStep: record(
    {
      step_no: text,
      kind: { type: 'string', enum: [...SHARE_STEP_KINDS] },
      refund_no: textOrNull,
      receivers: { type: 'array', items: { type: 'object', additionalProperties: true } },
      amount: money,
      status: text,
      channel_no: textOrNull,
      fail_reason: textOrNull,
      created_at: time,
    },
    'One step of profit sharing at the channel: a share, the unfreeze of the rest, or a return.',
  ),
  ConsoleNotificationWithAttempts: extend(
    api('Notification'),
    { app_id: text },
    'A notification, its app, its attempts.',
  ),
  TimelineEntry: {
    type: 'object',
    required: ['at', 'kind', 'summary'],
    properties: {
      at: time,
      kind: { type: 'string', enum: [...TIMELINE_KINDS] },
      summary: text,
      detail: { type: 'object', additionalProperties: true },
    },
    additionalProperties: false,
  },
  OrderDetail: record(
    {
      order: ref('ConsoleOrder'),
      refunds: { type: 'array', items: ref('ConsoleRefund') },
      shares: { type: 'array', items: ref('ShareStep') },
      notifications: { type: 'array', items: ref('ConsoleNotificationWithAttempts') },
      timeline: { type: 'array', items: ref('TimelineEntry'), description: 'Oldest first.' },
      workflow_url: {
        type: 'string',
        format: 'uri',
        description: "The order's workflow in the Temporal UI.",
      },
    },
    'An order and everything durapay stores of what happened to it.',
  ),
  ClosedOrder: record({ order: { oneOf: [ref('ConsoleOrder'), { type: 'null' }] } }),

  // ---- refunds ----
  ConsoleRefund: extend(
    api('Refund'),
    { app_id: text, fail_reason: textOrNull, updated_at: timeOrNull },
    'A refund, whose it is, and why it failed.',
  ),
  ConsoleRefundPage: keysetPage('ConsoleRefund', 'Refunds, newest first.'),

  // ---- transfers ----
  ConsoleTransfer: extend(
    api('Transfer'),
    { app_id: text, updated_at: timeOrNull },
    'A transfer and whose it is.',
  ),
  ConsoleTransferPage: keysetPage('ConsoleTransfer', 'Transfers, newest first.'),
  CancelledTransfer: extend(
    api('Transfer'),
    { app_id: text },
    'The transfer after the cancel, and whose it is.',
  ),

  // ---- complaints ----
  ConsoleComplaint: extend(
    api('Complaint'),
    consoleComplaintFields,
    'A complaint, whose it is (null: it names no order durapay has), and what was done about it.',
  ),
  ConsoleComplaintItem: extend(api('Complaint'), { app_id: textOrNull }, 'A complaint and whose it is.'),
  ConsoleComplaintPage: keysetPage('ConsoleComplaintItem', 'Complaints, newest first.'),
  ConsoleComplaintRefunded: extend(
    api('Complaint'),
    { ...consoleComplaintFields, refund: ref('RefundResult') },
    "The complaint with its refund, as the order's book answered it.",
  ),

  // ---- payment links and standing codes ----
  ConsolePaymentLink: extend(api('PaymentLink'), { app_id: text }, 'A payment link and whose it is.'),
  ConsolePaymentLinkPage: keysetPage('ConsolePaymentLink', 'Payment links, newest first.'),
  ConsoleCreatedPaymentLink: extend(
    api('CreatedPaymentLink'),
    { app_id: text },
    'The link made (or, a repeat of its `merchant_link_no`, as it was) and whose it is.',
  ),
  ConsoleMerchantCode: extend(api('MerchantCode'), { app_id: text }, 'A standing code and whose it is.'),
  ConsoleMerchantCodeList: record(
    { list: { type: 'array', items: ref('ConsoleMerchantCode') } },
    "The merchant's standing codes, newest first.",
  ),

  // ---- notifications ----
  ConsoleNotification: notification,
  ConsoleNotificationPage: keysetPage('ConsoleNotification', 'Notifications, the failed ones first.'),
  NotificationDetail: record({ notification: ref('ConsoleNotification'), attempts }),

  // ---- merchants ----
  ConsoleMerchantRecord: record(
    {
      app_id: text,
      merchant_id: text,
      merchant_name: text,
      license_no: textOrNull,
      status: ref('MerchantStatus'),
      channel_code: textOrNull,
      sub_merchant_no: textOrNull,
      profit_sharing: (api('Merchant').properties.profit_sharing as Schema) ?? {},
      created_at: timeOrNull,
      updated_at: timeOrNull,
    },
    'A merchant in a list: its record, without its personal data.',
  ),
  ConsoleMerchantPage: keysetPage('ConsoleMerchantRecord', 'Merchants, newest first.'),
  ConsoleMerchant: extend(api('Merchant'), { app_id: text }, 'A merchant as its app sees it, and whose.', [
    'channel_accounts',
  ]),
  ApplicationChange: {
    type: 'object',
    required: ['at', 'status'],
    properties: {
      at: timeOrNull,
      status: text,
      reject_reason: textOrNull,
      notification_id: { ...text, description: 'The notification that told it.' },
      delivery: { ...text, description: "That notification's delivery status." },
    },
    additionalProperties: false,
  },
  ConsoleApplication: extend(
    api('Application'),
    { audit_history: { type: 'array', items: ref('ApplicationChange') } },
    'An onboarding application and each change of it.',
  ),
  MerchantDetail: record({
    merchant: ref('ConsoleMerchant'),
    channel_accounts: { type: 'array', items: ref('ChannelAccount') },
    applications: { type: 'array', items: ref('ConsoleApplication') },
  }),
  AttachedChannelAccount: {
    ...(DATA_SCHEMAS.ChannelAccount as ObjectSchema),
    description: 'The account attached, and whose merchant it is.',
    required: ['app_id', 'merchant_id', ...(DATA_SCHEMAS.ChannelAccount as ObjectSchema).required],
    properties: {
      app_id: text,
      merchant_id: text,
      ...(DATA_SCHEMAS.ChannelAccount as ObjectSchema).properties,
    },
  },

  // ---- reconciliation ----
  ReconciliationRunKeysetPage: keysetPage('ReconciliationRun', 'Runs, newest first.'),
  ConsoleMismatch: extend(
    api('ReconciliationMismatch'),
    {
      app_id: {
        ...textOrNull,
        description: 'Null for a line of the statement durapay has no order or refund of.',
      },
    },
    'A finding, and whose order it names.',
  ),
  ConsoleMismatchPage: keysetPage('ConsoleMismatch', "A run's findings."),

  // ---- apps ----
  App: record(
    {
      app_id: text,
      name: text,
      scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
      status: { type: 'string', enum: [...APP_STATUSES] },
      created_at: timeOrNull,
      updated_at: timeOrNull,
    },
    'A client app, never its secrets.',
  ),
  AppPage: keysetPage('App', 'Apps, newest first.'),
  DisabledApp: { oneOf: [ref('App'), { type: 'null' }] },
};

/** The lists the console's menus are generated from: the constant each becomes, and its schema. */
export const CONSOLE_LISTS = {
  CHANNELS: 'ChannelCode',
  ORDER_STATUSES: 'OrderStatus',
  REFUND_STATUSES: 'RefundStatus',
  TRANSFER_STATUSES: 'TransferStatus',
  NOTIFICATION_STATUSES: 'NotificationStatus',
  NOTIFICATION_EVENTS: 'NotificationEvent',
  MERCHANT_STATUSES: 'MerchantStatus',
  RUN_STATUSES: 'RunStatus',
  MISMATCH_CATEGORIES: 'MismatchCategory',
  MISMATCH_STATES: 'MismatchState',
  RESOLUTIONS: 'Resolution',
  ROLES: 'OperatorRole',
} as const;
