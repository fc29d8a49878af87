import type http from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from './logger';
import { serveMetrics } from './metrics-server';

/** Seconds; a channel answers in tens of milliseconds, or not within its 10 s deadline. */
const CHANNEL_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Attempts a notification took, up to SPEC §6's 9 (first + 8 retries) and resends beyond. */
const ATTEMPT_BUCKETS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12];

/** The kinds of entity whose status changes are counted. */
export type TransitionKind = 'order' | 'refund' | 'transfer';
/** The status before an entity's first one: it was just created. */
export const NEW_STATUS = 'new';

/** Counts open workflows of each type (a visibility query); undefined when it cannot say now. */
export type OpenWorkflowCounter = () => Promise<Record<string, number> | undefined>;

/**
 * The worker process's Prometheus metrics: what its activities did (channel calls, status
 * changes of the read model, notification attempts), how many workflows are open, and the
 * Temporal SDK's own worker metrics, which its Rust core serves on a loopback port of its own and
 * which `GET /metrics` here appends, so that one scrape target has them all. Label values come
 * from closed sets (channel codes, operation names, statuses, event types), never from data.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly channelCalls = new Histogram({
    name: 'durapay_channel_call_duration_seconds',
    help: 'Calls to an upstream channel, by channel, operation (port.method) and outcome (ok or failed).',
    labelNames: ['channel', 'operation', 'outcome'] as const,
    buckets: CHANNEL_BUCKETS,
    registers: [this.registry],
  });
  readonly channelFailures = new Counter({
    name: 'durapay_channel_call_failures_total',
    help: 'Failed calls to an upstream channel, by channel, operation and kind (refused, unreachable, timeout, …).',
    labelNames: ['channel', 'operation', 'kind'] as const,
    registers: [this.registry],
  });
  readonly transitions = new Counter({
    name: 'durapay_status_transitions_total',
    help: 'Status changes of orders and refunds in the read model, by kind, from (new: created) and to.',
    labelNames: ['kind', 'from', 'to'] as const,
    registers: [this.registry],
  });
  readonly notificationAttempts = new Counter({
    name: 'durapay_notification_attempts_total',
    help: 'Notification delivery attempts, by event type and outcome (delivered, retry, failed).',
    labelNames: ['event', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly notificationsFinished = new Histogram({
    name: 'durapay_notification_attempts_to_finish',
    help: 'Attempts a notification series took to end, by event type and outcome (delivered or failed).',
    labelNames: ['event', 'outcome'] as const,
    buckets: ATTEMPT_BUCKETS,
    registers: [this.registry],
  });
  readonly callbacksDeleted = new Counter({
    name: 'durapay_channel_callbacks_deleted_total',
    help: 'Raw channel callbacks deleted after their retention (CALLBACK_RETENTION_DAYS).',
    registers: [this.registry],
  });
  readonly reconciliationFindings = new Counter({
    name: 'durapay_reconciliation_findings_total',
    help: "What reconciliation runs found on the channels' statements, by channel and category (SPEC §10); matched lines count as `matched`.",
    labelNames: ['channel', 'category'] as const,
    registers: [this.registry],
  });
  readonly reconciliationRuns = new Counter({
    name: 'durapay_reconciliation_runs_total',
    help: 'Reconciliation runs finished, by channel and status (completed or failed).',
    labelNames: ['channel', 'status'] as const,
    registers: [this.registry],
  });
  private openWorkflowCounter: OpenWorkflowCounter | undefined;
  /** Where the Temporal SDK's core serves its metrics (loopback), when it does. */
  private sdkMetricsUrl: string | undefined;

  constructor(private readonly logger?: Logger) {
    collectDefaultMetrics({ register: this.registry });
    const readCounts = () => this.readOpenWorkflowCounts();
    new Gauge({
      name: 'durapay_open_workflows',
      help: 'Running workflows in the namespace, by workflow type (Temporal visibility, read at scrape time).',
      labelNames: ['workflow_type'] as const,
      registers: [this.registry],
      async collect() {
        const counts = await readCounts();
        if (!counts) return;
        for (const [type, n] of Object.entries(counts)) this.set({ workflow_type: type }, n);
      },
    });
  }

  private async readOpenWorkflowCounts(): Promise<Record<string, number> | undefined> {
    return this.openWorkflowCounter?.().catch((err: unknown) => {
      this.logger?.warn('could not count open workflows', {
        error: err instanceof Error ? err.message : String(err),
      });
      return undefined;
    });
  }

  countOpenWorkflowsWith(counter: OpenWorkflowCounter): void {
    this.openWorkflowCounter = counter;
  }

  /** The Temporal SDK core's Prometheus endpoint (`host:port`), appended to every scrape. */
  appendSdkMetricsFrom(bindAddress: string): void {
    this.sdkMetricsUrl = `http://${bindAddress}/metrics`;
  }

  channelCall(channel: string, operation: string, seconds: number, failureKind?: string): void {
    this.channelCalls.observe({ channel, operation, outcome: failureKind ? 'failed' : 'ok' }, seconds);
    if (failureKind) this.channelFailures.inc({ channel, operation, kind: failureKind });
  }

  transition(kind: TransitionKind, from: string, to: string): void {
    this.transitions.inc({ kind, from, to });
  }

  /** One recorded delivery attempt; a final outcome also records how many attempts it took. */
  notificationAttempt(event: string, outcome: 'delivered' | 'retry' | 'failed', attempt: number): void {
    this.notificationAttempts.inc({ event, outcome });
    if (outcome !== 'retry') this.notificationsFinished.observe({ event, outcome }, attempt);
  }

  /** Raw callbacks deleted by one batch of the retention. */
  callbacksDeletedBy(n: number): void {
    this.callbacksDeleted.inc(n);
  }

  /** A reconciliation run's result: its status and what it found, per category. */
  reconciliationRun(channel: string, status: 'completed' | 'failed', counts: Record<string, number>): void {
    this.reconciliationRuns.inc({ channel, status });
    for (const [category, n] of Object.entries(counts)) {
      if (n > 0) this.reconciliationFindings.inc({ channel, category }, n);
    }
  }

  /** The exposition text: durapay's series, then the Temporal SDK's (when its core serves them). */
  async exposition(): Promise<string> {
    const own = await this.registry.metrics();
    if (!this.sdkMetricsUrl) return own;
    try {
      const res = await fetch(this.sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return `${own}\n${await res.text()}`;
    } catch (err) {
      this.logger?.warn('could not read the Temporal SDK metrics', {
        error: err instanceof Error ? err.message : String(err),
      });
      return own;
    }
  }

  /**
   * Serves `GET /metrics` on its own port (the worker has no API). A port that cannot be bound is
   * logged and left: the worker goes on moving money without its metrics.
   */
  serve(port: number, host = '0.0.0.0'): Promise<http.Server | undefined> {
    return serveMetrics({
      name: 'worker',
      port,
      host,
      exposition: () => this.exposition(),
      contentType: this.registry.contentType,
      logger: this.logger,
    });
  }
}
