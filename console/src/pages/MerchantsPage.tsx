import { Link } from 'react-router';
import type { Merchant } from '../api/types';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime } from '../format';
import { useListPage } from '../hooks';
import { MERCHANT_STATUSES } from '../options';

const FIELDS: FilterField[] = [
  { kind: 'text', name: 'merchant_id', label: 'Merchant id' },
  { kind: 'select', name: 'status', label: 'Status', options: MERCHANT_STATUSES },
  { kind: 'text', name: 'app_id', label: 'App id' },
];

export function MerchantsPage() {
  const list = useListPage<Merchant>('/merchants');
  return (
    <>
      <PageHeader title="Merchants" />
      <FilterBar name="merchants-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<Merchant>
        list={list}
        name="merchants"
        caption="Merchants"
        rowKey={(m) => m.merchant_id}
        columns={[
          {
            title: 'Merchant id',
            dataIndex: 'merchant_id',
            // Merchant ids are unique within an app: the link names whose.
            render: (v: string, m) => (
              <Link
                to={`/merchants/${encodeURIComponent(v)}${m.app_id ? `?app_id=${encodeURIComponent(m.app_id)}` : ''}`}
              >
                {v}
              </Link>
            ),
          },
          { title: 'Name', dataIndex: 'merchant_name' },
          { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
          { title: 'Channel', dataIndex: 'channel_code', render: (v) => cellText(v) },
          { title: 'Sub-merchant no', dataIndex: 'sub_merchant_no', render: (v) => cellText(v) },
          { title: 'App', dataIndex: 'app_id', render: (v) => cellText(v) },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
        ]}
      />
    </>
  );
}
