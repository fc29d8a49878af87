import { Col, Row as Grid, Typography } from 'antd';
import type { AuditEntry } from '../api/types';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { JsonBlock, ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime } from '../format';
import { useListPage } from '../hooks';

const FIELDS: FilterField[] = [
  { kind: 'text', name: 'operator', label: 'Operator' },
  { kind: 'text', name: 'action', label: 'Action' },
  { kind: 'text', name: 'target_type', label: 'Target type' },
  { kind: 'text', name: 'target_id', label: 'Target id' },
  { kind: 'range', label: 'When' },
];

const keyOf = (e: AuditEntry) => e.id;

export function AuditPage() {
  const list = useListPage<AuditEntry>('/audit');
  return (
    <>
      <PageHeader title="Audit log" />
      <FilterBar name="audit-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<AuditEntry>
        list={list}
        name="audit"
        caption="Audit log"
        rowKey={keyOf}
        expandable={{
          rowExpandable: (e) => e.before !== undefined || e.after !== undefined,
          expandedRowRender: (e) => (
            <Grid gutter={16}>
              <Col xs={24} lg={12}>
                <Typography.Text strong>Before</Typography.Text>
                <JsonBlock value={e.before ?? null} label={`Before, entry ${keyOf(e)}`} />
              </Col>
              <Col xs={24} lg={12}>
                <Typography.Text strong>After</Typography.Text>
                <JsonBlock value={e.after ?? null} label={`After, entry ${keyOf(e)}`} />
              </Col>
            </Grid>
          ),
        }}
        columns={[
          { title: 'When', key: 'at', render: (_: unknown, e) => localTime(e.at) },
          {
            title: 'Operator',
            key: 'operator',
            render: (_: unknown, e) => cellText(e.operator ?? e.operator_id),
          },
          { title: 'Action', dataIndex: 'action' },
          {
            title: 'Target',
            key: 'target',
            render: (_: unknown, e) => cellText([e.target_type, e.target_id].filter(Boolean).join(' ')),
          },
          {
            title: 'Outcome',
            key: 'outcome',
            render: (_: unknown, e) => (
              <>
                <StatusBadge status={e.outcome} />
                {e.error_code ? ` (${e.error_code})` : ''}
              </>
            ),
          },
          {
            title: 'Client address',
            key: 'ip',
            render: (_: unknown, e) => cellText(e.client_ip),
          },
        ]}
      />
    </>
  );
}
