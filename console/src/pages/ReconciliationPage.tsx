import { Link } from 'react-router';
import type { ReconciliationRun } from '../api/types';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { JsonBlock, ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime } from '../format';
import { useListPage } from '../hooks';
import { CHANNELS, RUN_STATUSES } from '../options';

const FIELDS: FilterField[] = [
  { kind: 'select', name: 'channel_code', label: 'Channel', options: CHANNELS },
  { kind: 'date', name: 'bill_date', label: 'Bill date' },
  { kind: 'select', name: 'status', label: 'Status', options: RUN_STATUSES },
];

export function ReconciliationPage() {
  const list = useListPage<ReconciliationRun>('/reconciliation/runs');
  return (
    <>
      <PageHeader title="Reconciliation" />
      <FilterBar name="runs-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<ReconciliationRun>
        list={list}
        name="runs"
        caption="Reconciliation runs"
        rowKey={(r) => r.run_id}
        expandable={{
          rowExpandable: (r) => r.summary !== undefined && r.summary !== null,
          expandedRowRender: (r) => <JsonBlock value={r.summary} label={`Summary of run ${r.run_id}`} />,
        }}
        columns={[
          {
            title: 'Run',
            dataIndex: 'run_id',
            render: (v: string) => (
              <Link to={`/reconciliation/runs/${encodeURIComponent(v)}`} data-testid={`run-link-${v}`}>
                {v}
              </Link>
            ),
          },
          { title: 'Channel', dataIndex: 'channel_code' },
          { title: 'Account', dataIndex: 'account', render: (v) => cellText(v) },
          { title: 'Bill date', dataIndex: 'bill_date' },
          { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
          { title: 'Rows', dataIndex: 'rows', render: (v) => cellText(v) },
          { title: 'Error', dataIndex: 'error', render: (v) => cellText(v) },
          { title: 'Started by', dataIndex: 'started_by', render: (v) => cellText(v) },
          { title: 'Started', dataIndex: 'started_at', render: localTime },
          { title: 'Finished', dataIndex: 'finished_at', render: localTime },
        ]}
      />
    </>
  );
}
