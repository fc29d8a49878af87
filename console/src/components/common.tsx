import { Alert, Badge, Button, Select, Space, Table, Typography, type TableProps } from 'antd';
import type { HTMLAttributes, ReactNode } from 'react';
import { errorMessage } from '../api/client';
import { PAGE_SIZES, usePageTitle, type ListPage } from '../hooks';

/** The page's title: its one h1, and the document's title. */
export function PageHeader({
  title,
  extra,
  children,
}: {
  title: string;
  extra?: ReactNode;
  children?: ReactNode;
}) {
  usePageTitle(title);
  return (
    <div style={{ marginBottom: 16 }}>
      <Space style={{ width: '100%', justifyContent: 'space-between' }} align="center" wrap>
        <Typography.Title level={1} style={{ fontSize: 24, margin: 0 }}>
          {title}
        </Typography.Title>
        {extra}
      </Space>
      {children}
    </div>
  );
}

/** A failed load, with the server's message. */
export function ErrorAlert({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <Alert
      type="error"
      showIcon
      role="alert"
      title={errorMessage(error)}
      action={
        onRetry ? (
          <Button size="small" onClick={onRetry}>
            Retry
          </Button>
        ) : undefined
      }
      style={{ marginBottom: 16 }}
    />
  );
}

const STATUS_LOOK: Record<string, 'success' | 'processing' | 'error' | 'warning' | 'default'> = {
  paid: 'success',
  success: 'success',
  succeeded: 'success',
  delivered: 'success',
  active: 'success',
  completed: 'success',
  finished: 'success',
  resolved: 'success',
  repaired: 'success',
  refunded: 'default',
  partially_refunded: 'warning',
  pending: 'processing',
  processing: 'processing',
  running: 'processing',
  auditing: 'processing',
  submitted: 'processing',
  wait_user_confirm: 'processing',
  cancelling: 'processing',
  to_be_confirmed: 'warning',
  to_be_signed: 'warning',
  created: 'default',
  closed: 'default',
  cancelled: 'default',
  canceled: 'default',
  disabled: 'default',
  carried: 'warning',
  open: 'warning',
  failed: 'error',
  abnormal: 'error',
  rejected: 'error',
  refused: 'error',
};

/** A status as a coloured dot and its name (the text keeps the page's contrast). */
export function StatusBadge({ status }: { status: unknown }) {
  if (typeof status !== 'string' || !status) return <>—</>;
  return <Badge status={STATUS_LOOK[status] ?? 'default'} text={status} />;
}

/** A value as indented JSON in a scrollable, focusable block. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre
      tabIndex={0}
      aria-label={label}
      style={{
        margin: 0,
        maxHeight: 320,
        overflow: 'auto',
        background: '#f5f5f5',
        color: '#1f1f1f',
        padding: 8,
        borderRadius: 4,
        fontSize: 12,
      }}
    >
      {value === undefined ? '—' : JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** "First page" / "Next page" and the page size of a keyset-paged list. */
export function Pager({ list, name }: { list: ListPage<unknown>; name: string }) {
  return (
    <nav aria-label="Pages" style={{ marginTop: 16 }}>
      <Space wrap>
        <Button onClick={list.firstPage} disabled={!list.paged} data-testid={`${name}-first-page`}>
          First page
        </Button>
        <Button onClick={list.nextPage} disabled={!list.data?.next} data-testid={`${name}-next-page`}>
          Next page
        </Button>
        <Select
          aria-label="Rows per page"
          value={list.limit}
          onChange={list.setLimit}
          style={{ width: 130 }}
          options={PAGE_SIZES.map((n) => ({ value: n, label: `${n} per page` }))}
        />
      </Space>
    </nav>
  );
}

/** The header of a table's expand column, for screen readers. */
export function DetailsHeader() {
  return <span className="visually-hidden">Details</span>;
}

/** An antd table whose rows carry `data-testid="row-<key>"`, paged by `Pager` below it. */
export function ListTable<T extends object>({
  list,
  name,
  rowKey,
  columns,
  caption,
  expandable,
}: {
  list: ListPage<T>;
  name: string;
  rowKey: (row: T) => string;
  columns: TableProps<T>['columns'];
  caption: string;
  expandable?: TableProps<T>['expandable'];
}) {
  return (
    <section aria-label={caption} data-testid={`${name}-table`}>
      <ErrorAlert error={list.error} onRetry={list.reload} />
      <Table<T>
        size="middle"
        rowKey={rowKey}
        dataSource={list.data?.list ?? []}
        loading={list.loading}
        columns={columns}
        pagination={false}
        expandable={expandable && { columnTitle: <DetailsHeader />, ...expandable }}
        onRow={(row) => ({ 'data-testid': `row-${rowKey(row)}` }) as HTMLAttributes<HTMLElement>}
      />
      <Pager list={list as ListPage<unknown>} name={name} />
    </section>
  );
}
