import { Table } from 'antd';
import type { HTMLAttributes } from 'react';
import type { Row } from '../api/types';
import { cellText, humanize, localTime, yuan } from '../format';
import { StatusBadge } from './common';

/** How a field of unknown rows is shown: amounts in yuan, times in local time, statuses as badges. */
export function renderField(key: string, value: unknown) {
  if (typeof value === 'number' && /amount/.test(key)) return yuan(value);
  if (typeof value === 'string' && /(_at|_time|^at|^time)$/.test(key)) return localTime(value);
  if (key === 'status' || key === 'state') return <StatusBadge status={value} />;
  return cellText(value);
}

export function fieldTitle(key: string): string {
  return humanize(key) + (/amount/.test(key) ? ' (yuan)' : '');
}

/** A table of rows whose fields the console does not know in advance (shares, audit history). */
export function AutoTable({ rows, name, exclude = [] }: { rows: Row[]; name: string; exclude?: string[] }) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => !exclude.includes(k));
  return (
    <Table<Row & { __key: string }>
      size="small"
      pagination={false}
      rowKey="__key"
      data-testid={`${name}-table`}
      dataSource={rows.map((r, i) => ({ ...r, __key: String(i) }))}
      onRow={(_, i) => ({ 'data-testid': `${name}-row-${i}` }) as HTMLAttributes<HTMLElement>}
      columns={keys.map((k) => ({
        key: k,
        title: fieldTitle(k),
        dataIndex: k,
        render: (v: unknown) => renderField(k, v),
      }))}
    />
  );
}
