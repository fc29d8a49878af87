// Longer than 400 lines on purpose: one place holds the data of every answer, so that the
// document and the conformance checks read one schema per resource.
/**
 * What the API answers, as JSON Schema (OpenAPI 3.1's dialect, draft 2020-12), written once from
 * SPEC: the envelope (§1) and the data of every endpoint. Enums and nullable fields are copied
 * from SPEC, not from the code, so that the integration suites, which check every answer they get
 * against this document, catch the code drifting from the contract. The exceptions are lists the
 * code has one of: the notification event types (SPEC §6), the notifications module's
 * NOTIFICATION_EVENTS, by which every publisher is typed; and what each channel declares in its
 * descriptor (its accounts' fields and its payee types), so that a new channel needs nothing here.
 */
import { CHANNEL_ACCOUNTS, PAYEE_KINDS } from '../../channels/registry';
import { NOTIFICATION_EVENTS } from '../../modules/notifications';
import { eitherOf } from '../../platform/words';

type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, 'null'] });

/** SPEC §1: RFC 3339 in UTC with milliseconds, e.g. `2026-11-22T05:31:02.560Z`. */
export const time: Schema = {
  type: 'string',
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  examples: ['2026-11-22T05:31:02.560Z'],
};
export const timeOrNull: Schema = {
  ...nullable(time),
  description: 'RFC 3339 in UTC with milliseconds, or null when not set.',
};
/** SPEC §1: an integer count of the currency's minor unit (fen for CNY). */
export const money: Schema = { type: 'integer', minimum: 0, maximum: 1_000_000_000_000 };
export const text: Schema = { type: 'string' };
export const textOrNull: Schema = nullable(text);

/** An object with exactly these fields, every one of them always present. */
export function record(properties: Record<string, Schema>, description?: string): Schema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    required: Object.keys(properties),
    properties,
    additionalProperties: false,
  };
}

/** SPEC §1, the error codes of the seed plus those marked beyond. */
export const ERROR_CODES = [
  'invalid_param',
  'missing_param',
  'invalid_pay_method',
  'invalid_amount',
  'unauthorized',
  'app_not_found',
  'permission_denied',
  'order_not_found',
  'order_already_paid',
  'order_closed',
  'refund_amount_exceed',
  'sharing_amount_exceed',
  'order_not_paid',
  'sharing_not_config',
  'sharing_fee_exceed',
  'refund_not_found',
  'transfer_not_found',
  'channel_create_fail',
  'channel_refund_fail',
  'channel_transfer_fail',
  'channel_timeout',
  'channel_not_support',
  'channel_verify_fail',
  'internal_system',
  'database_error',
  'rate_limited',
  'not_found',
  'notification_not_found',
  'reconciliation_not_found',
  'link_not_found',
  'complaint_not_found',
  'complaint_processed',
  'contract_not_found',
  'contract_ended',
] as const;
export type DocumentedErrorCode = (typeof ERROR_CODES)[number];

const tradeNo: Schema = {
  type: 'string',
  pattern: '^[A-Z0-9]{1,32}$',
  description: 'Service-generated, unique.',
  examples: ['P202611220531020000000042'],
};
const orderStatus: Schema = {
  type: 'string',
  enum: ['pending', 'paid', 'partially_refunded', 'refunded', 'closed'],
};
const refundStatus: Schema = {
  type: 'string',
  enum: ['processing', 'success', 'failed', 'abnormal'],
  description:
    "`abnormal`: the money left the order but the buyer's account could not take it; it stays counted as refunded until paid out another way (`POST /api/v1/pay/refund/abnormal`).",
};
const merchantStatus: Schema = { type: 'string', enum: ['created', 'auditing', 'active', 'rejected'] };

const profitSharing: Schema = {
  type: 'object',
  required: ['receivers', 'max_ratio'],
  properties: {
    receivers: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        required: ['type', 'account', 'weight'],
        properties: {
          type: text,
          account: text,
          name: text,
          weight: { type: 'integer', minimum: 1 },
        },
        additionalProperties: false,
      },
    },
    max_ratio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
  },
  additionalProperties: false,
};

/** Each channel's account fields, as its descriptor declares them: a number as it is, a token masked. */
const accountFields: Record<string, Schema> = Object.fromEntries(
  CHANNEL_ACCOUNTS.flatMap(({ accounts }) => accounts.kinds).flatMap((k): [string, Schema][] =>
    k.holds === 'token'
      ? [
          [k.kind, { ...textOrNull, description: 'Masked: all but the last 4 characters replaced by `*`.' }],
          [
            'user_id',
            { ...textOrNull, description: 'The account the channel confirmed the token for, when known.' },
          ],
        ]
      : [[k.kind, text]],
  ),
);

/** SPEC §5.8: a merchant's account at one channel (its fields from the channels' descriptors). */
const channelAccount = {
  type: 'object',
  description: `A merchant's account at one channel. The fields that name it are the channel's: ${CHANNEL_ACCOUNTS.map(
    ({ code, accounts }) =>
      `${eitherOf(accounts.kinds.map((k) => `\`${k.kind}\`${k.holds === 'token' ? ' with `user_id`' : ''}`))} (${code})`,
  ).join(', ')}.`,
  required: ['channel_code', 'status', 'source', 'activated_at', 'updated_at'],
  properties: {
    channel_code: { type: 'string', enum: CHANNEL_ACCOUNTS.map((c) => c.code) },
    ...accountFields,
    status: {
      type: 'string',
      enum: ['active', 'expired'],
      description:
        '`expired`: an Alipay authorisation that could not be refreshed; orders at it are refused.',
    },
    source: { type: 'string', enum: ['onboarding', 'attached', 'authorized', 'migrated'] },
    token_expires_at: timeOrNull,
    activated_at: time,
    updated_at: time,
  },
  additionalProperties: false,
} satisfies Schema & { required: string[]; properties: Record<string, Schema> };

const paymentLinkFields: Record<string, Schema> = {
  link_id: { type: 'string', pattern: '^pl_[a-z2-7]{20}$', description: 'Service-generated, unguessable.' },
  merchant_link_no: text,
  merchant_id: textOrNull,
  amount: money,
  subject: text,
  notify_url: text,
  expires_at: timeOrNull,
  max_payments: { type: 'integer', minimum: 1 },
  paid_count: { type: 'integer', minimum: 0, description: 'Its paid orders, refunded ones included.' },
  status: {
    type: 'string',
    enum: ['active', 'deactivated', 'expired', 'completed'],
    description: '`completed`: it has taken `max_payments` payments.',
  },
  url: { type: 'string', description: 'The page buyers open (in WeChat, in Alipay, or any browser).' },
  qr_code: { type: 'string', description: 'The same `url` as a QR image: an SVG `data:` URL.' },
  created_at: time,
  deactivated_at: timeOrNull,
};

const intOrNull: Schema = nullable({ type: 'integer', minimum: 0 });
/** SPEC §16: a consumer complaint's fields. */
const complaintFields: Record<string, Schema> = {
  complaint_id: { type: 'string', description: "The channel's id of the complaint." },
  channel_code: text,
  trade_no: {
    ...textOrNull,
    description: 'The order it names; null when durapay has no such order (operators only see those).',
  },
  order_unknown: { type: 'boolean' },
  merchant_id: textOrNull,
  sub_merchant_no: { type: 'string', description: 'The merchant complained about, at the channel.' },
  state: {
    type: 'string',
    enum: ['pending', 'processing', 'processed'],
    description:
      '`pending` until the first reply, `processing` while it is negotiated, `processed` once completed or fully refunded.',
  },
  problem_type: { type: 'string', enum: ['refund', 'service_not_work', 'other'] },
  apply_refund_amount: {
    ...intOrNull,
    description: 'What the payer asks back, in fen, for a refund request.',
  },
  detail: { type: 'string', description: "The payer's words (personal data)." },
  payer_phone: { ...textOrNull, description: "The payer's phone (personal data)." },
  image_count: { type: 'integer', minimum: 0 },
  history: {
    type: 'array',
    description: 'The negotiation, oldest first.',
    items: record({
      operator: text,
      at: { type: 'string', format: 'date-time' },
      type: {
        type: 'string',
        description: "The channel's operate_type: USER_CREATE_COMPLAINT, MERCHANT_RESPONSE, …",
      },
      details: text,
      image_count: { type: 'integer', minimum: 0 },
    }),
  },
  complaint_times: {
    type: 'integer',
    minimum: 1,
    description: 'How often the payer complained (a continued complaint counts again).',
  },
  awaits_reply: { type: 'boolean', description: 'The payer wrote and nobody has answered yet.' },
  full_refunded: { type: 'boolean' },
  complained_at: time,
  reply_due_at: { ...time, description: 'A first reply is due by then (24 h).' },
  complete_due_at: { ...time, description: 'The complaint is to be processed by then (72 h).' },
  replied_at: timeOrNull,
  completed_at: timeOrNull,
  overdue: { type: 'boolean', description: 'Past a deadline and not processed.' },
  refund_no: { ...textOrNull, description: "The refund made for the complaint, in the order's book." },
  refund_amount: intOrNull,
  updated_at: time,
};

/** The complaint's fields without its personal data: what its notifications post (modules/complaints/view.ts). */
function complaintEventFields(): Record<string, Schema> {
  const { detail: _detail, payer_phone: _phone, history, ...rest } = complaintFields;
  const step = (history as { items: { properties: Record<string, Schema> } }).items.properties;
  const { details: _details, ...stepRest } = step;
  return {
    ...rest,
    history: { type: 'array', description: 'The negotiation, oldest first.', items: record(stepRest) },
  };
}

/** The data of each successful answer, by name under `components.schemas`. */
export const DATA_SCHEMAS: Record<string, Schema> = {
  // `status` is a barcode order's only (SPEC §14): the one field not always present.
  CreatedOrder: {
    type: 'object',
    description: 'The created order and what the buyer pays with.',
    required: ['trade_no', 'pay_credential', 'is_idempotent'],
    additionalProperties: false,
    properties: {
      trade_no: tradeNo,
      pay_credential: {
        type: 'object',
        additionalProperties: true,
        description:
          'Shape depends on channel and pay method (sandbox: `pay_url`, `qr_code`; WeChat Pay JSAPI: the signed JSAPI parameters; `checkout`: `checkout_url`, the hosted page, and `qr_code`, the same as an image; …).',
      },
      is_idempotent: {
        type: 'boolean',
        description: 'True when this create repeated an existing pending order.',
      },
      status: {
        type: 'string',
        enum: ['paid', 'paying'],
        description:
          '`pay_method: barcode` only: `paid`, or `paying` while the buyer confirms in the wallet (query the order; it is reversed and closed if not paid within `BARCODE_WAIT`).',
      },
    },
  },
  Order: record(
    {
      trade_no: tradeNo,
      merchant_order_no: text,
      pay_method: {
        type: 'string',
        enum: ['qr_code', 'jsapi', 'mini_program', 'app', 'h5', 'web', 'barcode', 'checkout', 'contract'],
        description:
          "`contract`: a recurring contract's deduction (`merchant_order_no` `contract:{contract_no}:{period}:{attempt}`).",
      },
      amount: money,
      status: orderStatus,
      channel_trade_no: textOrNull,
      pay_time: timeOrNull,
      created_at: time,
      channel_code: {
        ...textOrNull,
        description:
          "The order's channel. A `checkout` order's is null until its buyer picks one on the hosted page.",
      },
      channel_pay_method: {
        ...textOrNull,
        description:
          'A `checkout` order once its buyer picked a channel: how it is paid there (`jsapi` in the wallet, `h5` in another browser). Null otherwise.',
      },
      subject: text,
      merchant_id: textOrNull,
      refunded_amount: money,
      profit_sharing_amount: money,
      profit_sharing_status: {
        type: 'string',
        enum: ['none', 'pending', 'processing', 'finished', 'failed', 'cancelled', 'returned'],
        description:
          '`cancelled`: refunded in full before the share was due, nothing shared; `returned`: all of the share came back from the receivers for refunds.',
      },
      profit_shared_amount: {
        ...money,
        description: 'What the share gave the receivers: at most what was unrefunded when it was made.',
      },
      profit_returned_amount: {
        ...money,
        description: 'What came back from the receivers for refunds larger than the unshared remainder.',
      },
      expire_time: time,
      closed_at: timeOrNull,
      close_reason: {
        type: ['string', 'null'],
        enum: ['refused', 'reversed', null],
        description:
          'A closed barcode order: `refused`, the channel refused the code; `reversed`, durapay reversed the payment and the channel gave back whatever it took. Null otherwise.',
      },
      device_id: { ...textOrNull, description: 'A barcode order: the till that scanned the code.' },
      store_id: { ...textOrNull, description: 'A barcode order: the shop.' },
      payment_link_id: {
        ...textOrNull,
        description: 'An order a buyer made through a payment link: the link. Null otherwise.',
      },
      standing_code_id: {
        ...textOrNull,
        description: "An order a buyer paid at a merchant's standing code: the code. Null otherwise.",
      },
      buyer_note: {
        ...textOrNull,
        description:
          "What the buyer wrote on a standing code's page (at most 64 characters). Null otherwise.",
      },
    },
    'An order as durapay has recorded it.',
  ),
  RefundResult: record(
    {
      refund_no: text,
      trade_no: tradeNo,
      refund_amount: money,
      status: refundStatus,
      channel_refund_no: textOrNull,
    },
    'The refund; the final status of a `processing` one arrives later and is notified.',
  ),
  AbnormalRefundResult: record(
    {
      refund_no: text,
      trade_no: tradeNo,
      refund_amount: money,
      status: {
        type: 'string',
        enum: ['abnormal', 'success'],
        description: 'Still `abnormal` until the channel has paid it out (then `success`, notified).',
      },
      channel_refund_no: textOrNull,
    },
    'The abnormal refund the channel was asked to pay out.',
  ),
  Refund: record(
    {
      refund_no: text,
      trade_no: tradeNo,
      refund_amount: money,
      status: refundStatus,
      channel_refund_no: textOrNull,
      refund_time: timeOrNull,
      reason: textOrNull,
      merchant_refund_no: textOrNull,
      created_at: time,
    },
    'A refund as durapay has recorded it.',
  ),
  Transfer: record(
    {
      transfer_no: {
        type: 'string',
        pattern: '^[A-Z0-9]{1,32}$',
        description: 'Service-generated, unique.',
        examples: ['T202611270531020000000042'],
      },
      merchant_transfer_no: text,
      channel_code: text,
      merchant_id: textOrNull,
      amount: money,
      currency: { type: 'string', examples: ['CNY'] },
      payee: record(
        {
          type: { type: 'string', enum: PAYEE_KINDS.map((p) => p.type) },
          account: { type: 'string', description: 'Masked; the name is never shown.' },
        },
        'Who is paid.',
      ),
      remark: text,
      status: {
        type: 'string',
        enum: ['processing', 'wait_user_confirm', 'success', 'failed', 'cancelled'],
        description:
          '`wait_user_confirm`: WeChat Pay waits for the payee to confirm (`pay_credential`); `cancelled`: cancelled, or never confirmed within 24 h.',
      },
      pay_credential: {
        oneOf: [record({ package_info: text }, 'For `wx.requestMerchantTransfer`.'), { type: 'null' }],
        description: 'While `wait_user_confirm`: what the payee confirms with.',
      },
      channel_transfer_no: textOrNull,
      fail_reason: textOrNull,
      created_at: time,
      finished_at: timeOrNull,
    },
    'A transfer as durapay has recorded it.',
  ),
  CreatedMerchant: record({ merchant_id: text }, 'The merchant recorded.'),
  Merchant: record(
    {
      merchant_id: text,
      merchant_name: text,
      license_no: textOrNull,
      legal_person: textOrNull,
      bank_account: { ...textOrNull, description: 'Masked: all but the last 4 digits replaced by `*`.' },
      status: merchantStatus,
      channel_code: textOrNull,
      sub_merchant_no: textOrNull,
      profit_sharing: { oneOf: [profitSharing, { type: 'null' }] },
      channel_accounts: {
        type: 'array',
        items: ref('ChannelAccount'),
        description: 'Its attached accounts, the most recently activated first.',
      },
      created_at: time,
      updated_at: time,
    },
    'A merchant record, as get and list return it. `channel_code` and `sub_merchant_no` show its most recently activated account.',
  ),
  ChannelAccount: channelAccount,
  MerchantChannelAccount: {
    ...channelAccount,
    description:
      "A merchant's account at one channel, with the merchant's id (merchant.channel_account.updated).",
    required: ['merchant_id', ...channelAccount.required],
    properties: { merchant_id: text, ...channelAccount.properties },
  },
  ChannelAccountList: record(
    { merchant_id: text, list: { type: 'array', items: ref('ChannelAccount') } },
    "The merchant's attached accounts, the most recently activated first.",
  ),
  AuthorizationStarted: record(
    {
      authorize_url: { type: 'string', format: 'uri' },
      expires_at: time,
    },
    "Alipay's authorisation page for the merchant, and until when its link works.",
  ),
  DetachedChannelAccount: record(
    { merchant_id: text, channel_code: text, detached_at: time },
    'The account detached; orders made with it keep using it.',
  ),
  MerchantPage: record(
    {
      list: { type: 'array', items: ref('Merchant') },
      limit: { type: 'integer', minimum: 0, maximum: 100 },
      offset: { type: 'integer', minimum: 0 },
    },
    'A page of merchants, newest first; `limit` and `offset` echo the values used.',
  ),
  UploadedFile: record({ file_id: text }, 'The id the channel assigned to the file.'),
  CreatedApplication: record(
    { application_id: text },
    'The application started, or the one still in progress at this channel.',
  ),
  Application: record(
    {
      application_id: text,
      merchant_id: text,
      channel_code: text,
      status: {
        type: 'string',
        enum: [
          'submitted',
          'auditing',
          'to_be_confirmed',
          'to_be_signed',
          'finished',
          'rejected',
          'canceled',
        ],
      },
      channel_application_no: textOrNull,
      sub_merchant_no: textOrNull,
      sign_url: textOrNull,
      reject_reason: textOrNull,
      audit_detail: { description: "The channel's audit detail as it reported it, or null." },
      submitted_at: timeOrNull,
      updated_at: time,
      finished_at: timeOrNull,
    },
    "The merchant's latest onboarding application.",
  ),
  Notification: record(
    {
      notification_id: text,
      type: { type: 'string', enum: [...NOTIFICATION_EVENTS] },
      status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
      url: text,
      trade_no: textOrNull,
      refund_no: textOrNull,
      application_id: textOrNull,
      payload: {
        type: 'object',
        required: ['type', 'timestamp', 'data'],
        description: 'The body POSTed to `url`.',
        properties: {
          type: { type: 'string', enum: [...NOTIFICATION_EVENTS] },
          timestamp: { type: 'string', format: 'date-time', description: 'When the event happened.' },
          data: {
            type: 'object',
            additionalProperties: true,
            description: 'The resource as its query endpoint returns it, plus `app_id`.',
          },
        },
      },
      series: {
        type: 'integer',
        minimum: 1,
        description: 'Counts resends: each starts a fresh series of attempts.',
      },
      attempt_count: { type: 'integer', minimum: 0 },
      next_attempt_at: timeOrNull,
      last_error: textOrNull,
      delivered_at: timeOrNull,
      created_at: time,
      updated_at: time,
      attempts: {
        type: 'array',
        items: record({
          series: { type: 'integer', minimum: 1 },
          attempt: { type: 'integer', minimum: 1 },
          attempted_at: time,
          http_status: { type: ['integer', 'null'] },
          latency_ms: { type: ['integer', 'null'], minimum: 0 },
          error: textOrNull,
        }),
      },
    },
    'A notification with every recorded attempt.',
  ),
  NotificationPage: record({
    list: { type: 'array', items: ref('Notification') },
    limit: { type: 'integer', minimum: 0, maximum: 100 },
    offset: { type: 'integer', minimum: 0 },
  }),
  ResentNotification: record({ notification_id: text, status: { const: 'pending' } }),
  PaymentLink: record(
    paymentLinkFields,
    'A payment link: each payment through it is an ordinary order with `payment_link_id`.',
  ),
  CreatedPaymentLink: record(
    {
      ...paymentLinkFields,
      is_idempotent: { type: 'boolean', description: 'A repeat of the same `merchant_link_no`.' },
    },
    'The link, new or (a repeat of the same `merchant_link_no`) as it was.',
  ),
  MerchantCode: record(
    {
      code_id: {
        type: 'string',
        pattern: '^mc_[a-z2-7]{20}$',
        description: 'Service-generated, unguessable.',
      },
      merchant_id: text,
      name: text,
      notify_url: text,
      min_amount: money,
      max_amount: money,
      status: { type: 'string', enum: ['active', 'disabled'] },
      url: { type: 'string', description: 'The page a buyer who scans the code opens.' },
      qr_code: { type: 'string', description: 'The same `url` as a QR image: an SVG `data:` URL.' },
      created_at: time,
      disabled_at: timeOrNull,
    },
    "A merchant's standing QR code (码牌): each payment at it is an ordinary order with `standing_code_id`.",
  ),
  MerchantCodePage: record({
    list: { type: 'array', items: ref('MerchantCode') },
    total: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 0, maximum: 100 },
    offset: { type: 'integer', minimum: 0 },
  }),
  PaymentLinkPage: record({
    list: { type: 'array', items: ref('PaymentLink') },
    total: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 0, maximum: 100 },
    offset: { type: 'integer', minimum: 0 },
  }),
  Complaint: record(
    complaintFields,
    "A consumer complaint about one of the app's orders, as the channel last told durapay.",
  ),
  ComplaintEvent: record(
    complaintEventFields(),
    "A complaint as its notifications post it: the complaint without the personal data (`detail`, `payer_phone`, the history's `details`), which `GET /api/v1/complaints/{complaint_id}` answers.",
  ),
  ComplaintPage: record({
    list: { type: 'array', items: ref('Complaint') },
    next: { ...textOrNull, description: 'Pass as `after` for the next page; null on the last.' },
  }),
  ComplaintRefunded: record(
    { ...complaintFields, refund: ref('RefundResult') },
    "The complaint with its refund, as the order's book answered it.",
  ),
  Contract: record(
    {
      contract_no: { type: 'string', pattern: '^K\\d{24}$', examples: ['K202612062113580123456789'] },
      merchant_contract_no: text,
      merchant_id: textOrNull,
      channel_code: text,
      status: { type: 'string', enum: ['signing', 'active', 'cancelled', 'ended', 'failed'] },
      subject: text,
      plan: record({
        period: { type: 'string', enum: ['day', 'week', 'month'] },
        every: { type: 'integer', minimum: 1 },
        amount: money,
        first_at: {
          ...timeOrNull,
          description: 'The first deduction: the signature, unless the create set it.',
        },
        count: intOrNull,
        total_amount: nullable(money),
      }),
      sign_url: {
        ...textOrNull,
        description: "The channel's page where the buyer signs; null once signed or ended.",
      },
      channel_contract_id: { ...textOrNull, description: "The channel's id of the contract, once signed." },
      signed_at: timeOrNull,
      finished_at: timeOrNull,
      cancelled_by: { type: ['string', 'null'], enum: ['merchant', 'buyer', null] },
      end_reason: textOrNull,
      periods_done: { type: 'integer', minimum: 0 },
      deducted_count: { type: 'integer', minimum: 0 },
      deducted_amount: money,
      next_deduction: nullable(
        record({ at: time, amount: money }, "The next deduction's window opening and amount, while active."),
      ),
      last_failure: nullable(
        record(
          { period: { type: 'integer', minimum: 1 }, reason: text, at: time },
          "The last period whose deduction failed after its last retry, with the channel's reason.",
        ),
      ),
      deductions: {
        type: 'array',
        items: record({
          period: { type: 'integer', minimum: 1 },
          attempt: { type: 'integer', minimum: 1 },
          merchant_order_no: {
            type: 'string',
            description: 'The order of the attempt: `contract:{contract_no}:{period}:{attempt}`.',
          },
          trade_no: nullable(tradeNo),
          amount: money,
          status: { type: 'string', enum: ['pending', 'paid', 'failed'] },
          reason: textOrNull,
          created_at: time,
          finished_at: timeOrNull,
        }),
      },
      notify_url: text,
      return_url: textOrNull,
      created_at: time,
      updated_at: time,
    },
    'A recurring contract: its plan, where it stands, and every deduction attempt with its order.',
  ),
  ContractPage: record({
    list: { type: 'array', items: ref('Contract') },
    next: { ...textOrNull, description: 'Pass as `after` for the next page; null on the last.' },
  }),
  OpenedContract: record({
    contract_no: { type: 'string', pattern: '^K\\d{24}$' },
    status: { type: 'string', enum: ['signing', 'active', 'cancelled', 'ended', 'failed'] },
    sign_url: {
      ...textOrNull,
      description: 'Where the buyer signs (null once the contract is signed or has ended).',
    },
    is_idempotent: { type: 'boolean', description: 'A repeat of the same `merchant_contract_no`.' },
  }),
  ReconciliationRun: record(
    {
      run_id: { type: 'string', description: '`{channel_code}:{account}:{bill_date}`.' },
      channel_code: text,
      account: text,
      bill_date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
      status: { type: 'string', enum: ['pending', 'running', 'completed', 'failed'] },
      statement: { type: ['string', 'null'], enum: ['ready', 'empty', null] },
      statement_sha256: textOrNull,
      rows: { type: 'integer', minimum: 0 },
      summary: nullable(
        record(
          {
            statement: { type: 'string', enum: ['ready', 'empty'] },
            rows: { type: 'integer', minimum: 0, description: "The statement's detail lines." },
            matched: { type: 'integer', minimum: 0, description: 'Lines both sides agree on.' },
            categories: record(
              Object.fromEntries(
                [
                  'missing_local_payment',
                  'missing_channel_payment',
                  'amount_mismatch',
                  'status_mismatch',
                  'unknown_at_durapay',
                ].map((c) => [c, { type: 'integer', minimum: 0 }]),
              ),
              'Findings per category (open, repaired or resolved).',
            ),
            carried: {
              type: 'integer',
              minimum: 0,
              description: 'Payments or refunds the statement lacks, waiting out the three-day carry-over.',
            },
            repaired: { type: 'integer', minimum: 0, description: 'Lost payments handed to their orders.' },
            channel: record(
              {
                paid: money,
                refunded: money,
                fees: {
                  type: 'integer',
                  description:
                    "The day's fees in thousandths of a minor unit, refunds' returned fees taken off.",
                },
              },
              "The statement's totals.",
            ),
            durapay: record({ paid: money, refunded: money }, "durapay's totals of the day for the account."),
          },
          'Null until the run completes.',
        ),
      ),
      error: textOrNull,
      started_by: {
        type: 'string',
        description: "`schedule`, `cli`, this app's id, or `app` when another app started it.",
      },
      started_at: timeOrNull,
      finished_at: timeOrNull,
    },
    "One channel account's statement of one day against durapay's books.",
  ),
  ReconciliationRunList: record({ list: { type: 'array', items: ref('ReconciliationRun') } }),
  ReconciliationRunPage: record({
    list: { type: 'array', items: ref('ReconciliationRun') },
    total: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 0, maximum: 100 },
    offset: { type: 'integer', minimum: 0 },
  }),
  ReconciliationMismatch: record(
    {
      mismatch_id: text,
      run_id: text,
      category: {
        type: 'string',
        enum: [
          'missing_local_payment',
          'missing_channel_payment',
          'amount_mismatch',
          'status_mismatch',
          'unknown_at_durapay',
        ],
      },
      kind: { type: 'string', enum: ['payment', 'refund'] },
      trade_no: text,
      refund_no: textOrNull,
      state: { type: 'string', enum: ['open', 'carried', 'repaired', 'resolved'] },
      durapay: {
        type: ['object', 'null'],
        additionalProperties: true,
        description: "durapay's row, null when it has none.",
      },
      channel: {
        type: ['object', 'null'],
        additionalProperties: true,
        description: "The statement's line, null when it has none.",
      },
      note: textOrNull,
      resolution: {
        type: ['string', 'null'],
        enum: ['accepted_channel', 'accepted_durapay', 'ignored', null],
      },
      resolved_by: textOrNull,
      resolved_at: timeOrNull,
      created_at: time,
    },
    'What a reconciliation run found that is not matched.',
  ),
  ReconciliationMismatchPage: record({
    list: { type: 'array', items: ref('ReconciliationMismatch') },
    total: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 0, maximum: 100 },
    offset: { type: 'integer', minimum: 0 },
  }),
  Alive: record({ status: { const: 'ok' } }),
  Ready: record({ status: { const: 'ready' }, database: { const: 'ok' }, temporal: { const: 'ok' } }),
};

/** The envelopes of SPEC §1. */
export const ENVELOPE_SCHEMAS: Record<string, Schema> = {
  RequestId: {
    type: 'string',
    pattern: '^[A-Za-z0-9._-]{1,128}$',
    description: "The `X-Request-Id` of the request: the caller's when valid, else one generated.",
  },
  ErrorCode: { type: 'string', enum: [...ERROR_CODES] },
  Error: {
    type: 'object',
    description: 'Every failure: HTTP status by category, `data` is null.',
    required: ['code', 'message', 'data', 'request_id'],
    properties: {
      code: ref('ErrorCode'),
      message: { type: 'string', minLength: 1 },
      data: { type: 'null' },
      request_id: ref('RequestId'),
    },
    additionalProperties: false,
  },
};

/** The success envelope around `data` (a schema, or null for an answer without data). */
export function successEnvelope(data: Schema | null): Schema {
  return {
    type: 'object',
    required: ['code', 'message', 'data', 'request_id'],
    properties: {
      code: { const: 'success' },
      message: { const: 'success' },
      data: data ?? { type: 'null' },
      request_id: ref('RequestId'),
    },
    additionalProperties: false,
  };
}

/** The error envelope with its code narrowed to those one operation answers with one status. */
export function errorEnvelope(codes: readonly DocumentedErrorCode[]): Schema {
  return { allOf: [ref('Error'), { properties: { code: { enum: [...codes] } } }] };
}

export { ref as schemaRef };
