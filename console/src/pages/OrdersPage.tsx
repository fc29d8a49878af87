import { Tabs, Tag } from 'antd';
import { Link } from 'react-router';
import type { Order } from '../api/types';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { localTime, yuan } from '../format';
import { useListPage } from '../hooks';
import { CHANNELS, ORDER_STATUSES } from '../options';

const FIELDS: FilterField[] = [
  { kind: 'text', name: 'trade_no', label: 'Trade no' },
  { kind: 'text', name: 'merchant_order_no', label: 'Merchant order no' },
  { kind: 'text', name: 'merchant_id', label: 'Merchant id' },
  { kind: 'text', name: 'app_id', label: 'App id' },
  { kind: 'select', name: 'status', label: 'Status', options: ORDER_STATUSES },
  { kind: 'select', name: 'channel_code', label: 'Channel', options: CHANNELS },
  { kind: 'range', label: 'Created' },
  { kind: 'amount', name: 'min_amount', label: 'Min amount (yuan)' },
  { kind: 'amount', name: 'max_amount', label: 'Max amount (yuan)' },
  { kind: 'checkbox', name: 'needs_refund_review', label: 'Needs refund review' },
];

export function OrdersPage() {
  const list = useListPage<Order>('/orders');
  const review = list.filters.needs_refund_review === 'true';
  return (
    <>
      <PageHeader title={review ? 'Orders needing refund review' : 'Orders'} />
      <Tabs
        activeKey={review ? 'review' : 'all'}
        onChange={(key) =>
          list.setFilters({ ...list.filters, needs_refund_review: key === 'review' ? 'true' : undefined })
        }
        items={[
          { key: 'all', label: 'All orders' },
          { key: 'review', label: <span data-testid="tab-needs-refund-review">Needs refund review</span> },
        ]}
      />
      <FilterBar name="orders-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<Order>
        list={list}
        name="orders"
        caption="Orders"
        rowKey={(o) => o.trade_no}
        columns={[
          {
            title: 'Trade no',
            dataIndex: 'trade_no',
            render: (v: string) => <Link to={`/orders/${encodeURIComponent(v)}`}>{v}</Link>,
          },
          { title: 'Merchant order no', dataIndex: 'merchant_order_no' },
          { title: 'Merchant', dataIndex: 'merchant_id', render: (v: string | null) => v ?? '—' },
          { title: 'Amount (yuan)', dataIndex: 'amount', align: 'right', render: yuan },
          { title: 'Refunded (yuan)', dataIndex: 'refunded_amount', align: 'right', render: yuan },
          {
            title: 'Status',
            dataIndex: 'status',
            render: (v: string, o) => (
              <>
                <StatusBadge status={v} />
                {o.needs_refund_review && (
                  <Tag color="orange" style={{ marginLeft: 8, color: '#873800' }}>
                    refund review
                  </Tag>
                )}
              </>
            ),
          },
          { title: 'Channel', dataIndex: 'channel_code' },
          { title: 'Pay method', dataIndex: 'pay_method' },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
        ]}
      />
    </>
  );
}
