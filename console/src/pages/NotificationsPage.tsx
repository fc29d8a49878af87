import { Button, Descriptions, Drawer, Skeleton, Space, Typography } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api/client';
import type { Notification, NotificationAttempt } from '../api/types';
import { ActionButton, AttemptsTable } from '../components/actions';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { ErrorAlert, JsonBlock, ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime } from '../format';
import { useApiData, useListPage } from '../hooks';
import { NOTIFICATION_EVENTS, NOTIFICATION_STATUSES } from '../options';
import { useCan } from '../session';

const FIELDS: FilterField[] = [
  { kind: 'select', name: 'status', label: 'Status', options: NOTIFICATION_STATUSES },
  { kind: 'text', name: 'trade_no', label: 'Trade no' },
  { kind: 'text', name: 'refund_no', label: 'Refund no' },
  { kind: 'text', name: 'app_id', label: 'App id' },
  { kind: 'select', name: 'event', label: 'Event', options: NOTIFICATION_EVENTS },
];

/** A notification's attempts, loaded when the drawer opens. */
function AttemptsDrawer({ id, onClose }: { id: string | null; onClose: () => void }) {
  const detail = useApiData<{ notification: Notification; attempts: NotificationAttempt[] }>(
    id ? `/notifications/${seg(id)}` : null,
  );
  const n = detail.data?.notification;
  return (
    <Drawer
      title={`Notification ${id ?? ''}`}
      open={id !== null}
      onClose={onClose}
      size="large"
      destroyOnHidden
      data-testid="attempts-drawer"
    >
      <ErrorAlert error={detail.error} onRetry={detail.reload} />
      {detail.loading || !n ? (
        <Skeleton active />
      ) : (
        <>
          <Descriptions
            size="small"
            column={1}
            bordered
            items={[
              { key: 'event', label: 'Event', children: n.type },
              { key: 'status', label: 'Status', children: <StatusBadge status={n.status} /> },
              { key: 'url', label: 'URL', children: n.url },
              { key: 'next', label: 'Next attempt', children: localTime(n.next_attempt_at) },
              { key: 'delivered', label: 'Delivered', children: localTime(n.delivered_at) },
              { key: 'error', label: 'Last error', children: cellText(n.last_error) },
            ]}
          />
          <Typography.Title level={2} style={{ fontSize: 16, marginTop: 16 }}>
            Attempts
          </Typography.Title>
          <AttemptsTable attempts={detail.data?.attempts ?? []} name="drawer" />
          {n.payload !== undefined && (
            <>
              <Typography.Title level={2} style={{ fontSize: 16, marginTop: 16 }}>
                Payload
              </Typography.Title>
              <JsonBlock value={n.payload} label="Payload" />
            </>
          )}
        </>
      )}
    </Drawer>
  );
}

export function NotificationsPage() {
  const list = useListPage<Notification>('/notifications');
  const canAct = useCan('operator');
  const [open, setOpen] = useState<string | null>(null);
  return (
    <>
      <PageHeader title="Notifications">
        <Typography.Paragraph type="secondary" style={{ marginTop: 8 }}>
          Without a status filter, failed notifications come first.
        </Typography.Paragraph>
      </PageHeader>
      <FilterBar
        name="notifications-filter"
        fields={FIELDS}
        filters={list.filters}
        onSearch={list.setFilters}
      />
      <ListTable<Notification>
        list={list}
        name="notifications"
        caption="Notifications"
        rowKey={(n) => n.notification_id}
        columns={[
          { title: 'Event', dataIndex: 'type' },
          { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
          {
            title: 'Trade no',
            dataIndex: 'trade_no',
            render: (v: string | null) =>
              v ? <Link to={`/orders/${encodeURIComponent(v)}`}>{v}</Link> : '—',
          },
          { title: 'Refund no', dataIndex: 'refund_no', render: (v) => cellText(v) },
          { title: 'Attempts', dataIndex: 'attempt_count', render: (v) => cellText(v) },
          { title: 'Last error', dataIndex: 'last_error', render: (v) => cellText(v) },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
          {
            title: 'Actions',
            key: 'actions',
            render: (_: unknown, n: Notification) => (
              <Space>
                <Button
                  size="small"
                  onClick={() => setOpen(n.notification_id)}
                  data-testid={`attempts-${n.notification_id}`}
                >
                  Attempts
                </Button>
                {canAct && (
                  <ActionButton
                    path={`/notifications/${seg(n.notification_id)}/resend`}
                    label="Resend"
                    confirm="Send this notification again?"
                    done="Notification queued again"
                    onDone={list.reload}
                    testId={`resend-${n.notification_id}`}
                  />
                )}
              </Space>
            ),
          },
        ]}
      />
      <AttemptsDrawer id={open} onClose={() => setOpen(null)} />
    </>
  );
}
