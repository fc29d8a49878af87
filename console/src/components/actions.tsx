import { App, Button, Popconfirm, Table } from 'antd';
import { useState, type ReactNode } from 'react';
import type { HTMLAttributes } from 'react';
import { api, errorMessage } from '../api/client';
import type { NotificationAttempt } from '../api/types';
import { localTime } from '../format';

/**
 * A button that POSTs one action after a confirmation, shows the server's answer, and then
 * reloads what it changed. Only rendered for roles that may act; the server decides anyway.
 */
export function ActionButton({
  path,
  body = {},
  label,
  confirm,
  done,
  onDone,
  testId,
  danger,
  size = 'small',
}: {
  path: string;
  body?: unknown;
  label: ReactNode;
  confirm: string;
  done: string;
  onDone: () => void;
  testId: string;
  danger?: boolean;
  size?: 'small' | 'middle';
}) {
  const { message } = App.useApp();
  const [busy, setBusy] = useState(false);
  return (
    <Popconfirm
      title={confirm}
      okText="Yes"
      cancelText="No"
      okButtonProps={{ 'data-testid': `${testId}-confirm` }}
      onConfirm={async () => {
        setBusy(true);
        try {
          await api.post(path, body);
          message.success(done);
          onDone();
        } catch (err) {
          message.error(errorMessage(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <Button size={size} danger={danger} loading={busy} data-testid={testId}>
        {label}
      </Button>
    </Popconfirm>
  );
}

/** A notification's delivery attempts, oldest first. */
export function AttemptsTable({ attempts, name }: { attempts: NotificationAttempt[]; name: string }) {
  return (
    <Table<NotificationAttempt & { __key: string }>
      size="small"
      pagination={false}
      rowKey="__key"
      data-testid={`${name}-attempts`}
      dataSource={attempts.map((a, i) => ({ ...a, __key: `${a.series ?? 0}-${a.attempt ?? i}-${i}` }))}
      onRow={(_, i) => ({ 'data-testid': `${name}-attempt-${i}` }) as HTMLAttributes<HTMLElement>}
      locale={{ emptyText: 'No attempt yet' }}
      columns={[
        { title: 'Series', dataIndex: 'series' },
        { title: 'Attempt', dataIndex: 'attempt' },
        { title: 'At', dataIndex: 'attempted_at', render: localTime },
        { title: 'HTTP status', dataIndex: 'http_status', render: (v: number | null) => v ?? '—' },
        { title: 'Latency (ms)', dataIndex: 'latency_ms', render: (v: number | null) => v ?? '—' },
        { title: 'Error', dataIndex: 'error', render: (v: string | null) => v ?? '—' },
      ]}
    />
  );
}
