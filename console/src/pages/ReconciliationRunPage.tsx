import { Button, Col, Form, Input, Modal, Row as Grid, Select } from 'antd';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, seg } from '../api/client';
import type { Mismatch } from '../api/types';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { JsonBlock, ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime } from '../format';
import { useFormSubmit, useListPage } from '../hooks';
import { MISMATCH_CATEGORIES, MISMATCH_STATES, RESOLUTIONS } from '../options';
import { useCan } from '../session';

const FIELDS: FilterField[] = [
  { kind: 'select', name: 'category', label: 'Category', options: MISMATCH_CATEGORIES },
  { kind: 'select', name: 'status', label: 'Status', options: MISMATCH_STATES },
];

const stateOf = (m: Mismatch) => m.state;

function ResolveModal({
  mismatch,
  onClose,
  onDone,
}: {
  mismatch: Mismatch | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const [form] = Form.useForm<{ note: string; resolution?: string }>();
  const { busy, submit } = useFormSubmit(
    form,
    async ({ note, resolution }) => {
      if (!mismatch) return null;
      await api.post(`/reconciliation/mismatches/${seg(mismatch.mismatch_id)}/resolve`, {
        note: note.trim(),
        ...(resolution ? { resolution } : {}),
      });
      return 'Mismatch resolved';
    },
    onDone,
  );
  return (
    <Modal
      title={mismatch ? `Resolve mismatch ${mismatch.mismatch_id}` : ''}
      open={mismatch !== null}
      onCancel={onClose}
      onOk={submit}
      okText="Resolve"
      okButtonProps={{ loading: busy, 'data-testid': 'resolve-submit' }}
      destroyOnHidden
    >
      <Form
        form={form}
        name="resolve"
        layout="vertical"
        preserve={false}
        initialValues={{ resolution: 'ignored' }}
      >
        <Form.Item label="Resolution" name="resolution">
          <Select options={[...RESOLUTIONS]} data-testid="resolve-resolution" />
        </Form.Item>
        <Form.Item
          label="Note"
          name="note"
          extra="What was found and done: it is kept with the mismatch and in the audit log."
          rules={[{ required: true, whitespace: true, message: 'Say how it was resolved' }]}
        >
          <Input.TextArea rows={3} maxLength={1000} data-testid="resolve-note" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

export function ReconciliationRunPage() {
  const { runId = '' } = useParams();
  const list = useListPage<Mismatch>(`/reconciliation/runs/${seg(runId)}/mismatches`);
  const canAct = useCan('operator');
  const [resolving, setResolving] = useState<Mismatch | null>(null);
  return (
    <>
      <PageHeader title={`Mismatches of run ${runId}`} extra={<Link to="/reconciliation">All runs</Link>} />
      <FilterBar name="mismatches-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<Mismatch>
        list={list}
        name="mismatches"
        caption="Mismatches"
        rowKey={(m) => m.mismatch_id}
        expandable={{
          expandedRowRender: (m) => (
            <Grid gutter={16}>
              <Col xs={24} lg={12}>
                <strong>durapay</strong>
                <JsonBlock value={m.durapay} label={`durapay's side of mismatch ${m.mismatch_id}`} />
              </Col>
              <Col xs={24} lg={12}>
                <strong>Channel</strong>
                <JsonBlock value={m.channel} label={`The channel's side of mismatch ${m.mismatch_id}`} />
              </Col>
            </Grid>
          ),
        }}
        columns={[
          { title: 'Id', dataIndex: 'mismatch_id' },
          { title: 'Category', dataIndex: 'category' },
          { title: 'Kind', dataIndex: 'kind' },
          {
            title: 'Trade no',
            dataIndex: 'trade_no',
            render: (v: string | null) =>
              v ? <Link to={`/orders/${encodeURIComponent(v)}`}>{v}</Link> : '—',
          },
          { title: 'Refund no', dataIndex: 'refund_no', render: (v) => cellText(v) },
          { title: 'Status', key: 'state', render: (_: unknown, m) => <StatusBadge status={stateOf(m)} /> },
          { title: 'Note', dataIndex: 'note', render: (v) => cellText(v) },
          { title: 'Resolution', dataIndex: 'resolution', render: (v) => cellText(v) },
          { title: 'Resolved by', dataIndex: 'resolved_by', render: (v) => cellText(v) },
          { title: 'Found', dataIndex: 'created_at', render: localTime },
          ...(canAct
            ? [
                {
                  title: 'Actions',
                  key: 'actions',
                  render: (_: unknown, m: Mismatch) =>
                    stateOf(m) === 'resolved' ? null : (
                      <Button
                        size="small"
                        onClick={() => setResolving(m)}
                        data-testid={`resolve-${m.mismatch_id}`}
                      >
                        Resolve
                      </Button>
                    ),
                },
              ]
            : []),
        ]}
      />
      <ResolveModal
        key={resolving?.mismatch_id ?? 'closed'}
        mismatch={resolving}
        onClose={() => setResolving(null)}
        onDone={() => {
          setResolving(null);
          list.reload();
        }}
      />
    </>
  );
}
