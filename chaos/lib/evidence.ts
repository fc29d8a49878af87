/**
 * What a violation is about, gathered while the stack still runs: for each order a violation
 * names, what the shopper was answered, its rows in the read model and at the channel, its
 * notifications, and its workflow's history in one line per event. A chaos failure then
 * explains itself from its report.
 */
import { Client as PgClient } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { OrderJourney } from './shopper';

const EventType = temporal.api.enums.v1.EventType;

export function describeEvent(e: temporal.api.history.v1.IHistoryEvent): string {
  const name = EventType[e.eventType ?? 0]?.replace('EVENT_TYPE_', '') ?? String(e.eventType);
  const detail =
    e.activityTaskScheduledEventAttributes?.activityType?.name ??
    e.workflowExecutionSignaledEventAttributes?.signalName ??
    e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ??
    e.activityTaskFailedEventAttributes?.failure?.message ??
    e.activityTaskTimedOutEventAttributes?.failure?.message ??
    e.workflowTaskFailedEventAttributes?.failure?.message ??
    (e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data
      ? Buffer.from(e.markerRecordedEventAttributes.details.data.payloads[0].data)
          .toString('utf8')
          .slice(0, 80)
      : undefined);
  const at = e.eventTime?.seconds
    ? new Date(Number(e.eventTime.seconds) * 1000).toISOString().slice(11, 19)
    : '';
  return `${e.eventId} ${at} ${name}${detail ? ` ${detail}` : ''}`;
}

export async function gatherEvidence(opts: {
  violations: string[];
  journeys: { tradeNo?: string }[] | OrderJourney[];
  databaseUrl: string;
  temporalAddress: string;
  appId: string;
}): Promise<Record<string, unknown>[]> {
  const tradeNos = [...new Set(opts.violations.flatMap((v) => v.match(/P\d{24}/g) ?? []))].slice(0, 5);
  if (tradeNos.length === 0) return [];
  const pg = new PgClient({ connectionString: opts.databaseUrl });
  await pg.connect();
  const connection = await Connection.connect({ address: opts.temporalAddress });
  const client = new Client({ connection });
  const out: Record<string, unknown>[] = [];
  try {
    for (const tradeNo of tradeNos) {
      const rows = async (sql: string) => (await pg.query(sql, [tradeNo])).rows;
      const order = (await rows('SELECT * FROM orders WHERE trade_no = $1'))[0] as
        { merchant_order_no?: string } | undefined;
      let history: string[] = [];
      if (order?.merchant_order_no) {
        try {
          const workflowId = `order:${opts.appId}:${order.merchant_order_no}`;
          for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
            const { events } = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
            history = history.concat(
              [`run ${run.runId} ${run.status.name}`],
              (events ?? []).map(describeEvent),
            );
          }
        } catch (err) {
          history.push(`history not read: ${String(err)}`);
        }
      }
      out.push({
        tradeNo,
        journey: (opts.journeys as { tradeNo?: string }[]).find((j) => j.tradeNo === tradeNo),
        order,
        channelOrder: (await rows('SELECT * FROM sandbox_orders WHERE trade_no = $1'))[0],
        refunds: await rows('SELECT * FROM refunds WHERE trade_no = $1'),
        channelRefunds: await rows('SELECT * FROM sandbox_refunds WHERE trade_no = $1'),
        shareSteps: await rows('SELECT * FROM profit_share_steps WHERE trade_no = $1 ORDER BY created_at'),
        notifications: await rows(
          'SELECT notification_id, event_type, status, attempt_count, last_error FROM notifications WHERE trade_no = $1',
        ),
        callbacks: await rows(
          'SELECT received_at, outcome, error, verified FROM channel_callbacks WHERE trade_no = $1 ORDER BY id',
        ),
        history,
      });
    }
  } finally {
    await pg.end();
    await connection.close();
  }
  return out;
}
