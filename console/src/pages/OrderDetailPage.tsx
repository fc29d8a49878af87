import { Button, Card, Descriptions, Empty, Skeleton, Space, Table, Tag, Timeline, Typography } from 'antd';
import { ExportOutlined } from '@ant-design/icons';
import { useState, type HTMLAttributes } from 'react';
import { Link, useParams } from 'react-router';
import { seg } from '../api/client';
import type { NotificationWithAttempts, OrderDetail, Refund, Row } from '../api/types';
import { ActionButton, AttemptsTable } from '../components/actions';
import { AutoTable, fieldTitle, renderField } from '../components/AutoTable';
import { DetailsHeader, ErrorAlert, JsonBlock, PageHeader, StatusBadge } from '../components/common';
import { RefundModal, refundableRest } from '../components/RefundModal';
import { cellText, localTime, uuid, yuan } from '../format';
import { useApiData } from '../hooks';
import { useCan } from '../session';

const TIME_KEYS = ['at', 'time', 'occurred_at', 'created_at', 'timestamp', 'event_time'];
const TITLE_KEYS = ['event', 'kind', 'type', 'title', 'name', 'status'];

function first(row: Row, keys: string[]): [string, unknown] | undefined {
  for (const k of keys) if (row[k] !== undefined && row[k] !== null && row[k] !== '') return [k, row[k]];
  return undefined;
}

/** A timeline entry's detail: its fields, amounts in yuan and times in local time. */
function DetailFields({ fields }: { fields: [string, unknown][] }) {
  const shown = fields.filter(([, v]) => v !== null && v !== undefined && v !== '');
  if (shown.length === 0) return null;
  return (
    <div>
      {shown.map(([k, v]) => (
        <div key={k}>
          <Typography.Text type="secondary">{fieldTitle(k)}:</Typography.Text>{' '}
          {typeof v === 'object' ? <code>{JSON.stringify(v)}</code> : renderField(k, v)}
        </div>
      ))}
    </div>
  );
}

/**
 * One timeline entry: `{at, kind, summary, detail}` as the server builds it; an entry of another
 * shape shows its time, its first naming field and the rest.
 */
function timelineItem(row: Row, i: number) {
  const time = first(row, TIME_KEYS);
  const summary = typeof row.summary === 'string' ? row.summary : undefined;
  const kind = typeof row.kind === 'string' ? row.kind : undefined;
  const title = summary !== undefined ? undefined : first(row, TITLE_KEYS);
  const detail = row.detail && typeof row.detail === 'object' ? Object.entries(row.detail as Row) : [];
  const rest =
    summary !== undefined ? detail : Object.entries(row).filter(([k]) => k !== time?.[0] && k !== title?.[0]);
  const failed = /fail|error|abnormal|not verified|closed/.test(`${summary ?? cellText(title?.[1])}`);
  return {
    key: String(i),
    color: failed ? 'red' : kind === 'paid' || /succe/.test(summary ?? '') ? 'green' : 'blue',
    title: time ? localTime(time[1]) : undefined,
    content: (
      <div data-testid={`timeline-${i}`}>
        {kind && summary !== undefined && <Tag>{kind}</Tag>}
        <Typography.Text strong={summary === undefined}>{summary ?? cellText(title?.[1])}</Typography.Text>
        <DetailFields fields={rest} />
      </div>
    ),
  };
}

function sortByTime(rows: Row[]): Row[] {
  const t = (r: Row) => {
    const v = first(r, TIME_KEYS)?.[1];
    return typeof v === 'string' ? Date.parse(v) || 0 : 0;
  };
  return [...rows].sort((a, b) => t(a) - t(b));
}

const KNOWN = new Set([
  'trade_no',
  'merchant_order_no',
  'status',
  'amount',
  'refunded_amount',
  'channel_code',
  'pay_method',
  'merchant_id',
  'subject',
  'created_at',
  'pay_time',
]);

export function OrderDetailPage() {
  const { tradeNo = '' } = useParams();
  const detail = useApiData<OrderDetail>(`/orders/${seg(tradeNo)}`);
  const canAct = useCan('operator');
  const [refundNo, setRefundNo] = useState<string | null>(null);
  const d = detail.data;
  const order = d?.order;

  if (!d || !order) {
    return (
      <>
        <PageHeader title={`Order ${tradeNo}`} />
        <ErrorAlert error={detail.error} onRetry={detail.reload} />
        {detail.loading && <Skeleton active />}
      </>
    );
  }

  const refunds = d.refunds ?? [];
  const rest = refundableRest(order, refunds);
  const canRefund = ['paid', 'partially_refunded'].includes(order.status) && rest > 0;
  const canClose = order.status === 'pending';
  const others = Object.entries(order).filter(([k]) => !KNOWN.has(k));

  return (
    <>
      <PageHeader
        title={`Order ${order.trade_no}`}
        extra={
          <Space wrap>
            {d.workflow_url && (
              <Button
                href={d.workflow_url}
                target="_blank"
                rel="noopener noreferrer"
                icon={<ExportOutlined aria-hidden />}
                data-testid="open-temporal-ui"
              >
                Open in Temporal UI
              </Button>
            )}
            {canAct && canClose && (
              <ActionButton
                size="middle"
                path={`/orders/${seg(order.trade_no)}/close`}
                label="Close"
                confirm={`Close order ${order.trade_no}? The buyer can no longer pay it.`}
                done="Order closed"
                onDone={detail.reload}
                testId="order-close"
                danger
              />
            )}
            {canAct && canRefund && (
              <Button
                type="primary"
                danger
                onClick={() => setRefundNo(`console-${uuid()}`)}
                data-testid="order-refund"
              >
                Refund
              </Button>
            )}
          </Space>
        }
      />
      <ErrorAlert error={detail.error} onRetry={detail.reload} />
      <Card style={{ marginBottom: 16 }}>
        <Descriptions
          bordered
          size="small"
          column={{ xs: 1, md: 2, xxl: 3 }}
          items={[
            { key: 'status', label: 'Status', children: <StatusBadge status={order.status} /> },
            { key: 'amount', label: 'Amount (yuan)', children: yuan(order.amount) },
            { key: 'refunded', label: 'Refunded (yuan)', children: yuan(order.refunded_amount) },
            { key: 'mon', label: 'Merchant order no', children: order.merchant_order_no },
            {
              key: 'merchant',
              label: 'Merchant',
              children: order.merchant_id ? (
                <Link to={`/merchants/${encodeURIComponent(order.merchant_id)}`}>{order.merchant_id}</Link>
              ) : (
                '—'
              ),
            },
            { key: 'subject', label: 'Subject', children: order.subject },
            { key: 'channel', label: 'Channel', children: order.channel_code },
            { key: 'method', label: 'Pay method', children: order.pay_method },
            { key: 'created', label: 'Created', children: localTime(order.created_at) },
            { key: 'paid', label: 'Paid', children: localTime(order.pay_time) },
            ...others.map(([k, v]) => ({
              key: k,
              label: fieldTitle(k),
              children:
                v !== null && typeof v === 'object' ? <code>{JSON.stringify(v)}</code> : renderField(k, v),
            })),
          ]}
        />
      </Card>

      <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Timeline</h2>} style={{ marginBottom: 16 }}>
        {(d.timeline ?? []).length === 0 ? (
          <Empty description="No events" />
        ) : (
          <Timeline
            data-testid="order-timeline"
            titleSpan={5}
            items={sortByTime(d.timeline).map(timelineItem)}
          />
        )}
      </Card>

      <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Refunds</h2>} style={{ marginBottom: 16 }}>
        <Table<Refund>
          size="small"
          pagination={false}
          rowKey="refund_no"
          dataSource={refunds}
          locale={{ emptyText: 'No refunds' }}
          onRow={(r) => ({ 'data-testid': `refund-row-${r.refund_no}` }) as HTMLAttributes<HTMLElement>}
          columns={[
            {
              title: 'Refund no',
              dataIndex: 'refund_no',
              render: (v: string) => <Link to={`/refunds?refund_no=${encodeURIComponent(v)}`}>{v}</Link>,
            },
            { title: 'Merchant refund no', dataIndex: 'merchant_refund_no', render: (v) => cellText(v) },
            { title: 'Amount (yuan)', dataIndex: 'refund_amount', align: 'right', render: yuan },
            { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
            { title: 'Reason', dataIndex: 'reason', render: (v) => cellText(v) },
            { title: 'Created', dataIndex: 'created_at', render: localTime },
            { title: 'Refunded', dataIndex: 'refund_time', render: localTime },
          ]}
        />
      </Card>

      <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Profit shares</h2>} style={{ marginBottom: 16 }}>
        {(d.shares ?? []).length === 0 ? (
          <Empty description="No shares" />
        ) : (
          <AutoTable rows={d.shares} name="shares" />
        )}
      </Card>

      <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Notifications</h2>}>
        <Table<NotificationWithAttempts>
          size="small"
          pagination={false}
          rowKey="notification_id"
          dataSource={d.notifications ?? []}
          locale={{ emptyText: 'No notifications' }}
          onRow={(n) =>
            ({ 'data-testid': `notification-row-${n.notification_id}` }) as HTMLAttributes<HTMLElement>
          }
          expandable={{
            columnTitle: <DetailsHeader />,
            expandedRowRender: (n) => (
              <>
                <AttemptsTable attempts={n.attempts} name={`notification-${n.notification_id}`} />
                {n.payload !== undefined && (
                  <div style={{ marginTop: 8 }}>
                    <JsonBlock value={n.payload} label={`Payload of notification ${n.notification_id}`} />
                  </div>
                )}
              </>
            ),
          }}
          columns={[
            { title: 'Event', dataIndex: 'type' },
            { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
            { title: 'Attempts', dataIndex: 'attempt_count', render: (v) => cellText(v) },
            { title: 'Last error', dataIndex: 'last_error', render: (v) => cellText(v) },
            { title: 'URL', dataIndex: 'url' },
            { title: 'Created', dataIndex: 'created_at', render: localTime },
            ...(canAct
              ? [
                  {
                    title: 'Actions',
                    key: 'actions',
                    render: (_: unknown, n: NotificationWithAttempts) => (
                      <ActionButton
                        path={`/notifications/${seg(n.notification_id)}/resend`}
                        label="Resend"
                        confirm="Send this notification again?"
                        done="Notification queued again"
                        onDone={detail.reload}
                        testId={`resend-${n.notification_id}`}
                      />
                    ),
                  },
                ]
              : []),
          ]}
        />
      </Card>

      {/* A new dialog (and form) for each opening, with that opening's refund number. */}
      <RefundModal
        key={refundNo ?? 'closed'}
        order={order}
        rest={rest}
        refundNo={refundNo}
        onClose={() => setRefundNo(null)}
        onDone={() => {
          setRefundNo(null);
          detail.reload();
        }}
      />
    </>
  );
}
