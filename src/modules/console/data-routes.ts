// Longer than 300 lines: every list and action of the console's JSON API that is not about
// sessions, operators or the audit log (docs/console.md), each a few lines over a module's
// repository or service; splitting them would scatter one table of routes over several files.
import type { Client } from '@temporalio/client';
import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import type { ChannelRegistry } from '../../channels/registry';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { parseJsonBody } from '../../platform/http/body';
import { sendData } from '../../platform/http/envelope';
import { apiRouter } from '../../platform/http/router';
import { pathValue, validate } from '../../platform/http/validation';
import type { Logger } from '../../platform/logger';
import { ApplicationRepository } from '../applications';
import type { AppRepository } from '../apps';
import { ComplaintRepository } from '../complaints';
import { CallbackLog } from '../callbacks';
import {
  accountView,
  attachMerchantAccount,
  attachSchema,
  ChannelAccountRepository,
  claimOf,
  MerchantRepository,
  NoSuchMerchantError,
  type MerchantRecord,
  type MerchantStatus,
} from '../merchants';
import {
  NotificationRepository,
  resendStoredNotification,
  type NotificationEvent,
  type NotificationStatus,
} from '../notifications';
import { orderWorkflowIdOf, type Order, type OrderService, type OrderStatus } from '../orders';
import type {
  MismatchCategory,
  MismatchState,
  ReconciliationService,
  Resolution,
  RunStatus,
} from '../reconciliation';
import type { AbnormalRefundBody, RefundService, RefundStatus } from '../refunds';
import type { TransferService, TransferStatus } from '../transfers';
import { audit, currentOperator, refusalsAudited, requireRole, type AuditInput } from './guard';
import { listOf, pageOf } from '../../platform/http/keyset';
import { orderTimeline } from './order-timeline';
import { overview } from './overview';
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
  refundBody,
  resolveBody,
  type Paging,
} from './schemas';
import {
  appView,
  attemptsView,
  consoleApplicationView,
  consoleMismatchView,
  consoleNotificationView,
  consoleOrderView,
  consoleRefundView,
  consoleTransferView,
  merchantDetailView,
  merchantRecordView,
} from './views';
import { runView } from '../reconciliation';

/** What the console's data routes need of the API's composition (src/api/app.ts). */
export interface ConsoleDataDeps {
  /** The API's services (ApiServices): the database, Temporal, the channels and their keys. */
  services: {
    db: Database;
    client: Client;
    taskQueue: string;
    channels: ChannelRegistry;
    payloadKeys: Keyring;
    notifications: { retryScheduleMs: number[] };
    timeScale: number;
  };
  /** The same services the API's routes call, so that an action from the console is the API's. */
  orders: OrderService;
  refunds: RefundService;
  transfers: TransferService;
  reconciliation: ReconciliationService;
  /** The apps, as the API's authentication holds them: a change is announced to every cache. */
  apps: AppRepository;
  /** The Temporal UI an order's workflow is linked to (config `temporal.uiUrl`, `temporal.namespace`). */
  temporalUi?: { url: string; namespace: string };
  /** The days of the overview (config `reconciliation.timeZone`). */
  timeZone?: string;
}

const DEFAULT_TEMPORAL_UI = { url: 'http://localhost:8233', namespace: 'default' };
const DEFAULT_TIME_ZONE = 'Asia/Shanghai';

/** Keys of list positions that are not free text (keyset.ts refuses a cursor whose key is not). */
const NUMBER_KEY = /^\d{1,18}$/;
const MERCHANT_KEY = /^[^:]{1,32}:.{1,64}$/su;

const log = (res: Response) => res.locals.log as Logger;

function notFound(what: string, id: string): AppError {
  return new AppError('not_found', `${what} ${id} not found`);
}

/** A validated list query: its filters, by their names in the query, and its paging. */
type Query<T> = T & Paging;

/** An operator action (docs/console.md "Actions"), audited however it ends. */
interface Action<T> {
  action: string;
  targetType: AuditInput['targetType'];
  targetId: string;
  /** Validates what was sent and finds the target: null when there is none (404 not_found). */
  load: () => Promise<T | null>;
  /** The target as the audit keeps it, before and after. */
  view: (target: T) => unknown;
  /** Reads the target again, after the action (or its refusal). */
  reload: (target: T) => Promise<T | null>;
  /** Does it, through the service the API calls; answers what the console is told. */
  run: (target: T) => Promise<unknown>;
}

/**
 * Does an action and appends it to the audit log with the target before and after: done, or
 * refused (a bad body, an unknown target, the service's own refusal) with the code the
 * operator was answered, after which the refusal is answered as it is.
 */
async function act<T>(res: Response, a: Action<T>): Promise<unknown> {
  const what = { action: a.action, targetType: a.targetType, targetId: a.targetId };
  let target: T | null = null;
  let before: unknown;
  const after = async (t: T | null) => {
    const now = t === null ? null : await a.reload(t);
    return now === null ? undefined : a.view(now);
  };
  const answer = await refusalsAudited(
    res,
    async () => {
      target = await a.load();
      if (target === null) throw notFound(a.targetType, a.targetId);
      before = a.view(target);
      return a.run(target);
    },
    async () => ({ ...what, before, after: await after(target) }),
  );
  await audit(res, { ...what, before, after: await after(target) });
  return answer;
}

/** A body that may be absent (`{}` or nothing), validated against `schema`. */
const bodyOf = <T>(req: Request, schema: Joi.Schema<T>): T => validate(schema, req.body ?? {});

/** The console's lists and actions over orders, refunds, transfers, notifications, merchants, reconciliation and apps. */
export function consoleDataRoutes(deps: ConsoleDataDeps): Router {
  const router = apiRouter();
  const { db, payloadKeys } = deps.services;
  const orders = deps.orders.repository;
  const refunds = deps.refunds.repository;
  const transfers = deps.transfers.repository;
  const reconciliation = deps.reconciliation.repository;
  const notifications = new NotificationRepository(db);
  const merchants = new MerchantRepository(db, payloadKeys);
  const accounts = new ChannelAccountRepository(db, payloadKeys);
  const applications = new ApplicationRepository(db, payloadKeys);
  const callbacks = new CallbackLog(db);
  const complaints = new ComplaintRepository(db, payloadKeys);
  const temporalUi = deps.temporalUi ?? DEFAULT_TEMPORAL_UI;
  const timeZone = deps.timeZone ?? DEFAULT_TIME_ZONE;
  const workflowUrl = (order: Order) =>
    `${temporalUi.url.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(temporalUi.namespace)}` +
    `/workflows/${encodeURIComponent(orderWorkflowIdOf(order))}`;

  router.get('/overview', async (req, res) => {
    validate(overviewQuery, req.query);
    sendData(
      res,
      await overview({ orders, refunds, notifications, applications, reconciliation, complaints }, timeZone),
    );
  });

  // ---- orders ----

  router.get('/orders', async (req, res) => {
    const q = validate(listOrdersQuery, req.query) as Query<Record<string, string | undefined>>;
    const found = await orders.search(
      {
        tradeNo: q.trade_no,
        merchantOrderNo: q.merchant_order_no,
        merchantId: q.merchant_id,
        appId: q.app_id,
        status: q.status as OrderStatus | undefined,
        channelCode: q.channel_code,
        from: q.from,
        to: q.to,
        minAmount: q.min_amount === undefined ? undefined : Number(q.min_amount),
        maxAmount: q.max_amount === undefined ? undefined : Number(q.max_amount),
        needsRefundReview: q.needs_refund_review === 'true',
      },
      pageOf(q),
    );
    sendData(res, listOf(found, consoleOrderView));
  });

  const findOrder = (tradeNo: string) => orders.findOrderByTradeNo(tradeNo);

  router.get('/orders/:tradeNo', async (req, res) => {
    const tradeNo = pathValue(req.params, 'tradeNo', 'trade_no');
    const order = await findOrder(tradeNo);
    if (!order) throw notFound('order', tradeNo);
    const [orderRefunds, shares, told, received] = await Promise.all([
      refunds.ofOrder(order.tradeNo),
      orders.shareSteps(order.tradeNo),
      notifications.ofTrade(order.appId, order.tradeNo),
      callbacks.aboutTrade(order.tradeNo),
    ]);
    sendData(res, {
      order: consoleOrderView(order),
      refunds: orderRefunds.map(consoleRefundView),
      shares: shares.map((s) => ({
        step_no: s.stepNo,
        kind: s.kind,
        refund_no: s.refundNo ?? null,
        receivers: s.receivers,
        amount: s.amount,
        status: s.status,
        channel_no: s.channelNo ?? null,
        fail_reason: s.failReason ?? null,
        created_at: s.createdAt.toISOString(),
      })),
      notifications: told.map((n) => ({ ...consoleNotificationView(n), attempts: attemptsView(n) })),
      timeline: orderTimeline({
        order,
        refunds: orderRefunds,
        shares,
        notifications: told,
        callbacks: received,
      }),
      workflow_url: workflowUrl(order),
    });
  });

  router.post('/orders/:tradeNo/close', requireRole('operator'), parseJsonBody(), async (req, res) => {
    const tradeNo = pathValue(req.params, 'tradeNo', 'trade_no');
    const answer = await act<Order>(res, {
      action: 'order.close',
      targetType: 'order',
      targetId: tradeNo,
      load: async () => {
        bodyOf(req, emptyBody);
        return findOrder(tradeNo);
      },
      view: consoleOrderView,
      reload: (o) => findOrder(o.tradeNo),
      run: async (o) => {
        await deps.orders.close(o.appId, o.tradeNo, log(res));
        const now = await findOrder(o.tradeNo);
        return { order: now && consoleOrderView(now) };
      },
    });
    sendData(res, answer);
  });

  router.post('/orders/:tradeNo/refund', requireRole('operator'), parseJsonBody(), async (req, res) => {
    const tradeNo = pathValue(req.params, 'tradeNo', 'trade_no');
    let body: { merchant_refund_no: string; amount: number; reason?: string } | undefined;
    // The order with its refunds: the audit log shows the refund among them after.
    const withRefunds = async (order: Order | null) =>
      order && { order, refunds: await refunds.ofOrder(order.tradeNo) };
    const answer = await act(res, {
      action: 'order.refund',
      targetType: 'order',
      targetId: tradeNo,
      load: async () => {
        body = bodyOf(req, refundBody) as typeof body;
        return withRefunds(await findOrder(tradeNo));
      },
      view: (t) => ({ ...consoleOrderView(t.order), refunds: t.refunds.map(consoleRefundView) }),
      reload: async (t) => withRefunds(await findOrder(t.order.tradeNo)),
      // The API's refund, for the order's app, told where the order's notifications go.
      run: ({ order: o }) =>
        deps.refunds.refund(
          o.appId,
          {
            trade_no: o.tradeNo,
            refund_amount: body!.amount,
            merchant_refund_no: body!.merchant_refund_no,
            notify_url: o.notifyUrl,
            ...(body!.reason === undefined ? {} : { reason: body!.reason }),
          },
          log(res),
        ),
    });
    sendData(res, answer);
  });

  // ---- refunds ----

  router.get('/refunds', async (req, res) => {
    const q = validate(listRefundsQuery, req.query) as Query<Record<string, string | undefined>>;
    const found = await refunds.search(
      {
        refundNo: q.refund_no,
        tradeNo: q.trade_no,
        appId: q.app_id,
        status: q.status as RefundStatus | undefined,
        from: q.from,
        to: q.to,
      },
      pageOf(q),
    );
    sendData(res, listOf(found, consoleRefundView));
  });

  router.post('/refunds/:refundNo/abnormal', requireRole('operator'), parseJsonBody(), async (req, res) => {
    const refundNo = pathValue(req.params, 'refundNo', 'refund_no');
    let body: Omit<AbnormalRefundBody, 'refund_no'> | undefined;
    const answer = await act(res, {
      action: 'refund.abnormal',
      targetType: 'refund',
      targetId: refundNo,
      load: async () => {
        // The bank card reaches the service sealed, never the audit log (which keeps views).
        body = bodyOf(req, abnormalBody) as typeof body;
        return refunds.findRefundByNo(refundNo);
      },
      view: consoleRefundView,
      reload: (r) => refunds.findRefundByNo(r.refundNo),
      run: (r) => deps.refunds.applyAbnormal(r.appId, { ...body!, refund_no: r.refundNo }, log(res)),
    });
    sendData(res, answer);
  });

  // ---- transfers ----

  router.get('/transfers', async (req, res) => {
    const q = validate(listTransfersQuery, req.query) as Query<Record<string, string | undefined>>;
    const found = await transfers.search(
      {
        transferNo: q.transfer_no,
        appId: q.app_id,
        status: q.status as TransferStatus | undefined,
        channelCode: q.channel_code,
        from: q.from,
        to: q.to,
      },
      pageOf(q),
    );
    sendData(res, listOf(found, consoleTransferView));
  });

  router.post('/transfers/:transferNo/cancel', requireRole('operator'), parseJsonBody(), async (req, res) => {
    const transferNo = pathValue(req.params, 'transferNo', 'transfer_no');
    const answer = await act(res, {
      action: 'transfer.cancel',
      targetType: 'transfer',
      targetId: transferNo,
      load: async () => {
        bodyOf(req, emptyBody);
        return transfers.findByNo(transferNo);
      },
      view: consoleTransferView,
      reload: (t) => transfers.findByNo(t.transferNo),
      run: async (t) => ({
        ...(await deps.transfers.cancel(t.appId, t.transferNo, log(res))),
        app_id: t.appId,
      }),
    });
    sendData(res, answer);
  });

  // ---- notifications ----

  router.get('/notifications', async (req, res) => {
    const q = validate(listNotificationsQuery, req.query) as Query<Record<string, string | undefined>>;
    const found = await notifications.search(
      {
        status: q.status as NotificationStatus | undefined,
        tradeNo: q.trade_no,
        refundNo: q.refund_no,
        appId: q.app_id,
        event: q.event as NotificationEvent | undefined,
      },
      pageOf(q),
    );
    sendData(res, listOf(found, consoleNotificationView));
  });

  router.get('/notifications/:notificationId', async (req, res) => {
    const id = pathValue(req.params, 'notificationId', 'notification_id');
    const n = await notifications.findById(id);
    if (!n) throw notFound('notification', id);
    sendData(res, { notification: consoleNotificationView(n), attempts: attemptsView(n) });
  });

  router.post(
    '/notifications/:notificationId/resend',
    requireRole('operator'),
    parseJsonBody(),
    async (req, res) => {
      const id = pathValue(req.params, 'notificationId', 'notification_id');
      const answer = await act(res, {
        action: 'notification.resend',
        targetType: 'notification',
        targetId: id,
        load: async () => {
          bodyOf(req, emptyBody);
          return notifications.findById(id);
        },
        view: consoleNotificationView,
        reload: (n) => notifications.findById(n.notificationId),
        run: async (n) => {
          await resendStoredNotification(deps.services, n);
          return { notification_id: n.notificationId, status: 'pending' };
        },
      });
      sendData(res, answer);
    },
  );

  // ---- merchants ----

  router.get('/merchants', async (req, res) => {
    const q = validate(listMerchantsQuery, req.query) as Query<Record<string, string | undefined>>;
    const found = await merchants.search(
      { merchantId: q.merchant_id, status: q.status as MerchantStatus | undefined, appId: q.app_id },
      pageOf(q, MERCHANT_KEY),
    );
    sendData(res, listOf(found, merchantRecordView));
  });

  /**
   * The merchant a path names: merchant ids are unique within an app only, so `appId` says
   * whose when more than one app has one of that id (400 invalid_param naming app_id if not).
   */
  const findMerchant = async (
    merchantId: string,
    appId: string | undefined,
  ): Promise<MerchantRecord | null> => {
    const found = (await merchants.findInEveryApp(merchantId)).filter(
      (m) => appId === undefined || m.appId === appId,
    );
    if (found.length > 1) {
      throw new AppError(
        'invalid_param',
        `"app_id" is required: ${found.length} apps have a merchant ${merchantId} (${found.map((m) => m.appId).join(', ')})`,
      );
    }
    return found[0] ?? null;
  };

  router.get('/merchants/:merchantId', async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantId', 'merchant_id');
    const q = validate(merchantQuery, req.query) as { app_id?: string };
    const record = await findMerchant(merchantId, q.app_id);
    const merchant = record && (await merchants.findWithPersonalData(record.appId, record.merchantId));
    if (!merchant) throw notFound('merchant', merchantId);
    const [attached, applied] = await Promise.all([
      accounts.attached(merchant.appId, merchant.merchantId),
      applications.ofMerchant(merchant.appId, merchant.merchantId),
    ]);
    const histories = await Promise.all(
      applied.map((a) => notifications.ofApplication(merchant.appId, a.application_id)),
    );
    sendData(res, {
      merchant: merchantDetailView(merchant),
      channel_accounts: attached.map(accountView),
      applications: applied.map((a, i) => consoleApplicationView(a, histories[i]!)),
    });
  });

  router.post(
    '/merchants/:merchantId/channel-accounts',
    requireRole('operator'),
    parseJsonBody(),
    async (req, res) => {
      const merchantId = pathValue(req.params, 'merchantId', 'merchant_id');
      let channelCode = '';
      let fields: Record<string, string> = {};
      const withAccounts = async (m: MerchantRecord | null) =>
        m && { merchant: m, accounts: await accounts.attached(m.appId, m.merchantId) };
      const answer = await act(res, {
        action: 'merchant.attach_channel_account',
        targetType: 'merchant',
        targetId: merchantId,
        load: async () => {
          const target = bodyOf(req, attachTarget) as { channel_code: string; app_id?: string };
          channelCode = target.channel_code;
          // The API's attach body for that channel, beside whose account it is.
          const schema = attachSchema(channelCode).keys({
            channel_code: Joi.string().required(),
            app_id: Joi.string(),
          });
          const {
            channel_code: _code,
            app_id: _app,
            ...rest
          } = bodyOf(req, schema) as Record<string, string>;
          fields = rest;
          return withAccounts(await findMerchant(merchantId, target.app_id));
        },
        view: ({ merchant, accounts: attached }) => ({
          ...merchantRecordView(merchant),
          channel_accounts: attached.map(accountView),
        }),
        reload: async ({ merchant }) =>
          withAccounts(await merchants.find(merchant.appId, merchant.merchantId)),
        run: async ({ merchant }) => {
          try {
            const { account } = await attachMerchantAccount(
              {
                channels: deps.services.channels,
                accounts,
                client: deps.services.client,
                taskQueue: deps.services.taskQueue,
              },
              {
                appId: merchant.appId,
                merchantId: merchant.merchantId,
                channelCode,
                claim: claimOf(channelCode, fields),
              },
              log(res),
            );
            return { ...accountView(account), app_id: merchant.appId, merchant_id: merchant.merchantId };
          } catch (err) {
            if (err instanceof NoSuchMerchantError) throw notFound('merchant', merchantId);
            throw err;
          }
        },
      });
      sendData(res, answer);
    },
  );

  // ---- reconciliation ----

  router.get('/reconciliation/runs', async (req, res) => {
    const q = validate(listRunsQuery, req.query) as Query<Record<string, string | undefined>>;
    const found = await reconciliation.searchRuns(
      { channelCode: q.channel_code, billDate: q.bill_date, status: q.status as RunStatus | undefined },
      pageOf(q),
    );
    sendData(res, listOf(found, runView));
  });

  router.get('/reconciliation/runs/:runId/mismatches', async (req, res) => {
    const runId = pathValue(req.params, 'runId', 'run_id');
    const q = validate(listMismatchesQuery, req.query) as Query<Record<string, string | undefined>>;
    const page = pageOf(q, NUMBER_KEY);
    if (!(await reconciliation.find(runId))) throw notFound('reconciliation run', runId);
    const found = await reconciliation.searchMismatches(
      runId,
      {
        category: q.category as MismatchCategory | undefined,
        state: q.status as MismatchState | undefined,
      },
      page,
    );
    sendData(res, listOf(found, consoleMismatchView));
  });

  router.post(
    '/reconciliation/mismatches/:mismatchId/resolve',
    requireRole('operator'),
    parseJsonBody(),
    async (req, res) => {
      const id = pathValue(req.params, 'mismatchId', 'mismatch_id');
      let body: { note: string; resolution?: Resolution } | undefined;
      const find = async (mismatchId: string) =>
        NUMBER_KEY.test(mismatchId) ? ((await reconciliation.mismatch(mismatchId)) ?? null) : null;
      const answer = await act(res, {
        action: 'mismatch.resolve',
        targetType: 'mismatch',
        targetId: id,
        load: async () => {
          body = bodyOf(req, resolveBody) as typeof body;
          return find(id);
        },
        view: consoleMismatchView,
        reload: (m) => find(String(m.id)),
        run: async (m) =>
          consoleMismatchView(
            await deps.reconciliation.resolve(m.app_id, String(m.id), {
              resolution: body!.resolution ?? 'ignored',
              note: body!.note,
              resolvedBy: currentOperator(res).username,
            }),
          ),
      });
      sendData(res, answer);
    },
  );

  // ---- apps ----

  router.get('/apps', async (req, res) => {
    const q = validate(appsQuery, req.query) as Paging;
    sendData(res, listOf(await deps.apps.search(pageOf(q)), appView));
  });

  router.post('/apps/:appId/disable', requireRole('admin'), parseJsonBody(), async (req, res) => {
    const appId = pathValue(req.params, 'appId', 'app_id');
    const answer = await act(res, {
      action: 'app.disable',
      targetType: 'app',
      targetId: appId,
      load: async () => {
        bodyOf(req, emptyBody);
        return (await deps.apps.find(appId)) ?? null;
      },
      view: appView,
      reload: async (a) => (await deps.apps.find(a.appId)) ?? null,
      // As `durapay apps disable` does: the change is announced to every API process's app
      // cache (Postgres NOTIFY), and this process's forgets the app at once.
      run: async (a) => {
        await deps.apps.setStatus(a.appId, 'disabled');
        const now = await deps.apps.find(a.appId);
        return now && appView(now);
      },
    });
    sendData(res, answer);
  });

  return router;
}
