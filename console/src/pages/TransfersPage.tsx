import type { Transfer } from '../api/types';
import { seg } from '../api/client';
import { ActionButton } from '../components/actions';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime, yuan } from '../format';
import { useListPage } from '../hooks';
import { CHANNELS, TRANSFER_STATUSES } from '../options';
import { useCan } from '../session';

const FIELDS: FilterField[] = [
  { kind: 'text', name: 'transfer_no', label: 'Transfer no' },
  { kind: 'text', name: 'app_id', label: 'App id' },
  { kind: 'select', name: 'status', label: 'Status', options: TRANSFER_STATUSES },
  { kind: 'select', name: 'channel_code', label: 'Channel', options: CHANNELS },
  { kind: 'range', label: 'Created' },
];

const FINAL = new Set<Transfer['status']>(['success', 'failed', 'cancelled']);

export function TransfersPage() {
  const list = useListPage<Transfer>('/transfers');
  const canAct = useCan('operator');
  return (
    <>
      <PageHeader title="Transfers" />
      <FilterBar name="transfers-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<Transfer>
        list={list}
        name="transfers"
        caption="Transfers"
        rowKey={(t) => t.transfer_no}
        columns={[
          { title: 'Transfer no', dataIndex: 'transfer_no' },
          { title: 'Merchant transfer no', dataIndex: 'merchant_transfer_no' },
          { title: 'Channel', dataIndex: 'channel_code' },
          { title: 'Merchant', dataIndex: 'merchant_id', render: (v) => cellText(v) },
          { title: 'Amount (yuan)', dataIndex: 'amount', align: 'right', render: yuan },
          {
            title: 'Payee',
            dataIndex: 'payee',
            render: (p: Transfer['payee']) => (p ? `${p.type} ${p.account ?? ''}`.trim() : '—'),
          },
          { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
          { title: 'Failure', dataIndex: 'fail_reason', render: (v) => cellText(v) },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
          ...(canAct
            ? [
                {
                  title: 'Actions',
                  key: 'actions',
                  render: (_: unknown, t: Transfer) =>
                    FINAL.has(t.status) ? null : (
                      <ActionButton
                        path={`/transfers/${seg(t.transfer_no)}/cancel`}
                        label="Cancel"
                        confirm={`Cancel transfer ${t.transfer_no}?`}
                        done="Cancellation requested"
                        onDone={list.reload}
                        testId={`cancel-${t.transfer_no}`}
                        danger
                      />
                    ),
                },
              ]
            : []),
        ]}
      />
    </>
  );
}
