// Longer than 300 lines: every operation of the console's JSON API, one table beside the routes
// that serve them (session-routes.ts, admin-routes.ts, data-routes.ts), as each module keeps its
// own; the document assembles them (src/api/openapi/console-document.ts).
import Joi from 'joi';
import type { ConsoleOperation, OperationPathParameter } from '../../platform/http/openapi';
import { attachAnySchema } from '../merchants';
import { auditQuery, createOperatorBody, resetPasswordBody, roleBody } from './admin-routes';
import {
  abnormalBody,
  appsQuery,
  attachTarget,
  emptyBody,
  listMerchantsQuery,
  listMismatchesQuery,
  listNotificationsQuery,
  listOrdersQuery,
  listRefundsQuery,
  listRunsQuery,
  listTransfersQuery,
  merchantQuery,
  overviewQuery,
  paging,
  refundBody,
  resolveBody,
} from './schemas';
import { signInBody } from './session-routes';

const path = (name: string, description: string, example: string): OperationPathParameter => ({
  name,
  description,
  example,
});

const tradeNo = path('tradeNo', 'The order’s `trade_no`.', 'P202611270531020000000042');
const refundNo = path('refundNo', 'The refund’s `refund_no`.', 'R202611270531020000000042');
const transferNo = path('transferNo', 'The transfer’s `transfer_no`.', 'T202611270531020000000042');
const notificationId = path('notificationId', 'The notification’s `notification_id`.', 'n_1');
const merchantId = path('merchantId', 'The `merchant_id` its app gave the merchant.', 'm-1');
const runId = path(
  'runId',
  'The run’s `run_id` (`{channel_code}:{account}:{bill_date}`).',
  'sandbox:_:2026-12-01',
);
const mismatchId = path('mismatchId', 'The finding’s `mismatch_id`.', '42');
const operatorId = path('operatorId', 'The operator’s `operator_id`.', 'op_1');
const appId = path('appId', 'The app’s `app_id`.', 'app_0123456789abcdef');

/** The console's attach body: the channel, whose merchant (when ids repeat across apps), and the channel's fields. */
const attachBody = attachTarget.keys(
  Object.fromEntries(
    Object.entries(attachAnySchema.describe().keys ?? {}).map(([field]) => [
      field,
      attachAnySchema.extract(field),
    ]),
  ),
);

/** What every change of an operator refuses besides its own errors. */
const OPERATOR_CHANGE_ERRORS: ConsoleOperation['errors'] = { 400: ['invalid_param'], 404: ['not_found'] };

export const consoleOperations: ConsoleOperation[] = [
  // ---- the session ----
  {
    method: 'post',
    path: '/console/api/session',
    operationId: 'signIn',
    tag: 'Session',
    summary: 'Sign in',
    description:
      'Checks the username, the password and, when the operator has one, the TOTP code; sets the session cookie (`HttpOnly`, `SameSite=Strict`, `Secure` outside development) and answers the operator and the CSRF token every change must send as `X-CSRF-Token`. Wrong credentials are `401 unauthorized`, saying nothing of which part was wrong; too many in a row lock the account for a while (`429 rate_limited`).',
    access: 'anyone',
    body: { name: 'SignInRequest', schema: signInBody, required: true },
    data: 'Session',
    errors: { 400: ['invalid_param'], 401: ['unauthorized'], 429: ['rate_limited'] },
  },
  {
    method: 'get',
    path: '/console/api/session',
    operationId: 'currentSession',
    tag: 'Session',
    summary: 'The session of the cookie',
    description: 'The operator signed in and the session’s CSRF token.',
    access: 'viewer',
    data: 'Session',
    errors: {},
  },
  {
    method: 'delete',
    path: '/console/api/session',
    operationId: 'signOut',
    tag: 'Session',
    summary: 'Sign out',
    description: 'Ends this session and clears its cookie.',
    access: 'viewer',
    data: 'SignedOut',
    errors: {},
  },
  {
    method: 'post',
    path: '/console/api/session/sign-out-everywhere',
    operationId: 'signOutEverywhere',
    tag: 'Session',
    summary: 'Sign out everywhere',
    description: 'Ends every session of the operator signed in, this one included.',
    access: 'viewer',
    data: 'SessionsEnded',
    errors: {},
  },

  // ---- operators and the audit log ----
  {
    method: 'get',
    path: '/console/api/operators',
    operationId: 'listOperators',
    tag: 'Operators',
    summary: 'List operators',
    description: 'Every operator, by username; keyset pages (`next` is the `after` of the next page).',
    access: 'admin',
    query: Joi.object(paging),
    data: 'OperatorPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'post',
    path: '/console/api/operators',
    operationId: 'createOperator',
    tag: 'Operators',
    summary: 'Make an operator',
    description:
      'Makes an operator with a role; without a `password`, the server makes one and answers it, once. A name taken or not allowed is `400 invalid_param` with the reason.',
    access: 'admin',
    body: { name: 'CreateOperatorRequest', schema: createOperatorBody, required: true },
    data: 'OperatorWithPassword',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'post',
    path: '/console/api/operators/{operatorId}/role',
    operationId: 'setOperatorRole',
    tag: 'Operators',
    summary: 'Change an operator’s role',
    description: 'The last active admin cannot stop being one (`400 invalid_param`).',
    access: 'admin',
    pathParameters: [operatorId],
    body: { name: 'SetRoleRequest', schema: roleBody, required: true },
    data: 'OperatorAnswer',
    errors: { ...OPERATOR_CHANGE_ERRORS },
  },
  {
    method: 'post',
    path: '/console/api/operators/{operatorId}/disable',
    operationId: 'disableOperator',
    tag: 'Operators',
    summary: 'Disable an operator',
    description: 'Ends the operator’s sessions; it can no longer sign in. Not the last active admin.',
    access: 'admin',
    pathParameters: [operatorId],
    data: 'OperatorAnswer',
    errors: { ...OPERATOR_CHANGE_ERRORS },
  },
  {
    method: 'post',
    path: '/console/api/operators/{operatorId}/enable',
    operationId: 'enableOperator',
    tag: 'Operators',
    summary: 'Enable an operator',
    description: 'Lets a disabled operator sign in again.',
    access: 'admin',
    pathParameters: [operatorId],
    data: 'OperatorAnswer',
    errors: { ...OPERATOR_CHANGE_ERRORS },
  },
  {
    method: 'post',
    path: '/console/api/operators/{operatorId}/reset-password',
    operationId: 'resetOperatorPassword',
    tag: 'Operators',
    summary: 'Reset an operator’s password',
    description:
      'Sets the password given, or one the server makes and answers once; the operator’s sessions end.',
    access: 'admin',
    pathParameters: [operatorId],
    body: { name: 'ResetPasswordRequest', schema: resetPasswordBody, required: false },
    data: 'OperatorWithPassword',
    errors: { ...OPERATOR_CHANGE_ERRORS },
  },
  {
    method: 'get',
    path: '/console/api/audit',
    operationId: 'listAudit',
    tag: 'Operators',
    summary: 'The audit log',
    description:
      'Every action an operator took or was refused, newest first: who, when, what, the target before and after, and how it ended.',
    access: 'admin',
    query: auditQuery,
    data: 'AuditPage',
    errors: { 400: ['invalid_param'] },
  },

  // ---- the overview ----
  {
    method: 'get',
    path: '/console/api/overview',
    operationId: 'overview',
    tag: 'Overview',
    summary: 'Today, the last 30 days, and what waits for a person',
    description:
      'Orders, payments, refunds and conversion per day (in the reconciliation’s time zone) and per channel and pay method, and the count of each kind of exception.',
    access: 'viewer',
    query: overviewQuery,
    data: 'Overview',
    errors: { 400: ['invalid_param'] },
  },

  // ---- orders ----
  {
    method: 'get',
    path: '/console/api/orders',
    operationId: 'listOrders',
    tag: 'Orders',
    summary: 'List orders',
    description: 'Orders of every app, newest first, with filters; keyset pages.',
    access: 'viewer',
    query: listOrdersQuery,
    data: 'ConsoleOrderPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/console/api/orders/{tradeNo}',
    operationId: 'getOrder',
    tag: 'Orders',
    summary: 'An order and everything that happened to it',
    description:
      'The order, its refunds, its profit-sharing steps, its notifications with their attempts, its timeline and a link to its workflow in the Temporal UI.',
    access: 'viewer',
    pathParameters: [tradeNo],
    data: 'OrderDetail',
    errors: { 400: ['invalid_param'], 404: ['not_found'] },
  },
  {
    method: 'post',
    path: '/console/api/orders/{tradeNo}/close',
    operationId: 'closeOrder',
    tag: 'Orders',
    summary: 'Close an order',
    description: 'What `POST /api/v1/pay/close` does, for the order’s app; audited.',
    access: 'operator',
    pathParameters: [tradeNo],
    body: { name: 'EmptyRequest', schema: emptyBody, required: false },
    data: 'ClosedOrder',
    errors: {
      400: ['invalid_param'],
      404: ['not_found'],
      422: ['order_not_found', 'order_already_paid', 'order_closed'],
      502: ['channel_timeout', 'channel_not_support'],
    },
  },
  {
    method: 'post',
    path: '/console/api/orders/{tradeNo}/refund',
    operationId: 'refundOrder',
    tag: 'Orders',
    summary: 'Refund an order',
    description:
      'What `POST /api/v1/pay/refund` does, for the order’s app and its notify_url (an order paid after it closed, for one); audited.',
    access: 'operator',
    pathParameters: [tradeNo],
    body: { name: 'ConsoleRefundRequest', schema: refundBody, required: true },
    data: 'RefundResult',
    errors: {
      400: ['invalid_param'],
      404: ['not_found'],
      422: ['order_not_found', 'order_not_paid', 'order_closed', 'refund_amount_exceed'],
      502: ['channel_refund_fail', 'channel_timeout', 'channel_not_support'],
    },
  },

  // ---- refunds ----
  {
    method: 'get',
    path: '/console/api/refunds',
    operationId: 'listRefunds',
    tag: 'Refunds',
    summary: 'List refunds',
    description: 'Refunds of every app, newest first, with filters; keyset pages.',
    access: 'viewer',
    query: listRefundsQuery,
    data: 'ConsoleRefundPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'post',
    path: '/console/api/refunds/{refundNo}/abnormal',
    operationId: 'payOutAbnormalRefund',
    tag: 'Refunds',
    summary: 'Pay an abnormal refund out another way',
    description:
      'What `POST /api/v1/pay/refund/abnormal` does, for the refund’s app: the bank card reaches the channel sealed and is never shown or audited; audited.',
    access: 'operator',
    pathParameters: [refundNo],
    body: { name: 'AbnormalPayoutRequest', schema: abnormalBody, required: true },
    data: 'AbnormalRefundResult',
    errors: {
      400: ['invalid_param'],
      404: ['not_found'],
      422: ['refund_not_found'],
      502: ['channel_refund_fail', 'channel_timeout', 'channel_not_support'],
    },
  },

  // ---- transfers ----
  {
    method: 'get',
    path: '/console/api/transfers',
    operationId: 'listTransfers',
    tag: 'Transfers',
    summary: 'List transfers',
    description: 'Transfers of every app, newest first, with filters; keyset pages.',
    access: 'viewer',
    query: listTransfersQuery,
    data: 'ConsoleTransferPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'post',
    path: '/console/api/transfers/{transferNo}/cancel',
    operationId: 'cancelTransfer',
    tag: 'Transfers',
    summary: 'Cancel a transfer',
    description: 'What `POST /api/v1/transfer/cancel` does, for the transfer’s app; audited.',
    access: 'operator',
    pathParameters: [transferNo],
    body: { name: 'EmptyRequest', schema: emptyBody, required: false },
    data: 'CancelledTransfer',
    errors: {
      400: ['invalid_param'],
      404: ['not_found'],
      422: ['transfer_not_found'],
      502: ['channel_transfer_fail', 'channel_not_support', 'channel_timeout'],
    },
  },

  // ---- notifications ----
  {
    method: 'get',
    path: '/console/api/notifications',
    operationId: 'listNotifications',
    tag: 'Notifications',
    summary: 'List notifications',
    description: 'Notifications of every app, the failed ones first, with filters; keyset pages.',
    access: 'viewer',
    query: listNotificationsQuery,
    data: 'ConsoleNotificationPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/console/api/notifications/{notificationId}',
    operationId: 'getNotification',
    tag: 'Notifications',
    summary: 'A notification and its attempts',
    description: 'The notification, its payload, and every attempt of every series, oldest first.',
    access: 'viewer',
    pathParameters: [notificationId],
    data: 'NotificationDetail',
    errors: { 400: ['invalid_param'], 404: ['not_found'] },
  },
  {
    method: 'post',
    path: '/console/api/notifications/{notificationId}/resend',
    operationId: 'resendNotification',
    tag: 'Notifications',
    summary: 'Resend a notification',
    description: 'Starts a new series of attempts, as the API’s resend does; audited.',
    access: 'operator',
    pathParameters: [notificationId],
    body: { name: 'EmptyRequest', schema: emptyBody, required: false },
    data: 'ResentNotification',
    errors: { 400: ['invalid_param'], 404: ['not_found'] },
  },

  // ---- merchants ----
  {
    method: 'get',
    path: '/console/api/merchants',
    operationId: 'listMerchants',
    tag: 'Merchants',
    summary: 'List merchants',
    description: 'Merchants of every app, without their personal data, with filters; keyset pages.',
    access: 'viewer',
    query: listMerchantsQuery,
    data: 'ConsoleMerchantPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/console/api/merchants/{merchantId}',
    operationId: 'getMerchant',
    tag: 'Merchants',
    summary: 'A merchant, its accounts and its applications',
    description:
      'The merchant as its app sees it (bank account masked), its attached channel accounts and its onboarding applications with their histories. A merchant id more than one app has needs `app_id` (`400 invalid_param` naming it).',
    access: 'viewer',
    pathParameters: [merchantId],
    query: merchantQuery,
    data: 'MerchantDetail',
    errors: { 400: ['invalid_param'], 404: ['not_found'] },
  },
  {
    method: 'post',
    path: '/console/api/merchants/{merchantId}/channel-accounts',
    operationId: 'attachChannelAccount',
    tag: 'Merchants',
    summary: 'Attach an account at a channel',
    description:
      'What `PUT /api/v1/merchant/{merchantID}/channel-accounts/{channel_code}` does, for the merchant’s app: `channel_code`, the app (when merchant ids repeat) and the fields the channel declares; audited.',
    access: 'operator',
    pathParameters: [merchantId],
    body: { name: 'ConsoleAttachRequest', schema: attachBody, required: true },
    data: 'AttachedChannelAccount',
    errors: { 400: ['invalid_param'], 404: ['not_found'], 502: ['channel_timeout'] },
  },

  // ---- reconciliation ----
  {
    method: 'get',
    path: '/console/api/reconciliation/runs',
    operationId: 'listReconciliationRuns',
    tag: 'Reconciliation',
    summary: 'List reconciliation runs',
    description: 'Runs of every channel account, newest first, with filters; keyset pages.',
    access: 'viewer',
    query: listRunsQuery,
    data: 'ReconciliationRunKeysetPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/console/api/reconciliation/runs/{runId}/mismatches',
    operationId: 'listReconciliationMismatches',
    tag: 'Reconciliation',
    summary: 'What a run found',
    description: 'The run’s findings of every app, with filters; keyset pages.',
    access: 'viewer',
    pathParameters: [runId],
    query: listMismatchesQuery,
    data: 'ConsoleMismatchPage',
    errors: { 400: ['invalid_param'], 404: ['not_found'] },
  },
  {
    method: 'post',
    path: '/console/api/reconciliation/mismatches/{mismatchId}/resolve',
    operationId: 'resolveMismatch',
    tag: 'Reconciliation',
    summary: 'Resolve a finding',
    description: 'Records what was decided and why, by the operator signed in; audited.',
    access: 'operator',
    pathParameters: [mismatchId],
    body: { name: 'ConsoleResolveRequest', schema: resolveBody, required: true },
    data: 'ConsoleMismatch',
    errors: { 400: ['invalid_param'], 404: ['not_found', 'reconciliation_not_found'] },
  },

  // ---- apps ----
  {
    method: 'get',
    path: '/console/api/apps',
    operationId: 'listApps',
    tag: 'Apps',
    summary: 'List apps',
    description: 'Every client app, never its secrets; keyset pages.',
    access: 'viewer',
    query: appsQuery,
    data: 'AppPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'post',
    path: '/console/api/apps/{appId}/disable',
    operationId: 'disableApp',
    tag: 'Apps',
    summary: 'Disable an app',
    description:
      'As `durapay apps disable` does: its requests are refused from then on, in every API process; audited.',
    access: 'admin',
    pathParameters: [appId],
    body: { name: 'EmptyRequest', schema: emptyBody, required: false },
    data: 'DisabledApp',
    errors: { 400: ['invalid_param'], 404: ['not_found'] },
  },
];
