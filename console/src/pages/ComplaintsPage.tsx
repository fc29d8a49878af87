import { Tag } from 'antd';
import { Link } from 'react-router';
import { seg } from '../api/client';
import type { ComplaintItem } from '../api/types';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime, yuan } from '../format';
import { useListPage } from '../hooks';

const FIELDS: FilterField[] = [
  {
    kind: 'select',
    name: 'state',
    label: 'State',
    options: ['pending', 'processing', 'processed'].map((v) => ({ value: v, label: v })),
  },
  {
    kind: 'select',
    name: 'overdue',
    label: 'Overdue',
    options: [
      { value: 'true', label: 'overdue' },
      { value: 'false', label: 'in time' },
    ],
  },
  { kind: 'text', name: 'merchant_id', label: 'Merchant id' },
  { kind: 'text', name: 'app_id', label: 'App id' },
  { kind: 'text', name: 'trade_no', label: 'Trade no' },
];

/** Every app's consumer complaints (SPEC §16), the overdue ones flagged. */
export function ComplaintsPage() {
  const list = useListPage<ComplaintItem>('/complaints');
  return (
    <>
      <PageHeader title="Complaints" />
      <FilterBar name="complaints-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<ComplaintItem>
        list={list}
        name="complaints"
        caption="Complaints"
        rowKey={(c) => c.complaint_id}
        columns={[
          {
            title: 'Complaint id',
            dataIndex: 'complaint_id',
            render: (v: string) => <Link to={`/complaints/${seg(v)}`}>{v}</Link>,
          },
          { title: 'App', dataIndex: 'app_id', render: (v) => cellText(v) },
          { title: 'Merchant', dataIndex: 'merchant_id', render: (v) => cellText(v) },
          {
            title: 'Order',
            dataIndex: 'trade_no',
            render: (v: string | null) =>
              v ? <Link to={`/orders/${seg(v)}`}>{v}</Link> : <Tag>unknown order</Tag>,
          },
          { title: 'Problem', dataIndex: 'problem_type' },
          {
            title: 'Asks back (yuan)',
            dataIndex: 'apply_refund_amount',
            align: 'right',
            render: (v: number | null) => (v === null ? '—' : yuan(v)),
          },
          {
            title: 'State',
            key: 'state',
            render: (_: unknown, c: ComplaintItem) => (
              <>
                <StatusBadge status={c.state} />
                {c.overdue && (
                  <Tag color="red" data-testid={`overdue-${c.complaint_id}`}>
                    overdue
                  </Tag>
                )}
              </>
            ),
          },
          { title: 'Reply due', dataIndex: 'reply_due_at', render: localTime },
          { title: 'Complete due', dataIndex: 'complete_due_at', render: localTime },
          { title: 'Complained', dataIndex: 'complained_at', render: localTime },
        ]}
      />
    </>
  );
}
