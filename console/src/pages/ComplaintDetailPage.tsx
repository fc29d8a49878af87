import {
  App,
  Button,
  Card,
  Descriptions,
  Form,
  Input,
  InputNumber,
  Skeleton,
  Space,
  Table,
  Tag,
  Timeline,
} from 'antd';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, errorMessage, seg } from '../api/client';
import type { Complaint } from '../api/types';
import { ActionButton } from '../components/actions';
import { ErrorAlert, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime, yuan } from '../format';
import { useApiData } from '../hooks';
import { useCan } from '../session';

/** The operator's reply and refund forms: each POSTs once, then the page reads the complaint again. */
function ComplaintActions({ c, onDone }: { c: Complaint; onDone: () => void }) {
  const { message } = App.useApp();
  const [busy, setBusy] = useState<'reply' | 'refund' | null>(null);
  const [reply] = Form.useForm<{ content: string }>();
  const [refund] = Form.useForm<{ amount_yuan: number; reason?: string }>();
  const path = `/complaints/${seg(c.complaint_id)}`;
  const run = async (what: 'reply' | 'refund', body: unknown, done: string) => {
    setBusy(what);
    try {
      await api.post(`${path}/${what}`, body);
      message.success(done);
      (what === 'reply' ? reply : refund).resetFields();
      onDone();
    } catch (err) {
      message.error(errorMessage(err));
    } finally {
      setBusy(null);
    }
  };
  return (
    <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Act</h2>} style={{ marginBottom: 16 }}>
      <Space direction="vertical" style={{ width: '100%' }}>
        <Form
          form={reply}
          name="complaint-reply"
          layout="inline"
          onFinish={(v) => run('reply', { content: v.content }, 'Reply sent')}
        >
          <Form.Item label="Reply" name="content" rules={[{ required: true, message: 'Write the reply' }]}>
            <Input.TextArea style={{ width: 420 }} maxLength={200} showCount rows={2} />
          </Form.Item>
          <Form.Item>
            <Button
              htmlType="submit"
              type="primary"
              loading={busy === 'reply'}
              data-testid="complaint-reply-submit"
            >
              Send reply
            </Button>
          </Form.Item>
        </Form>
        {c.trade_no && c.refund_no === null && (
          <Form
            form={refund}
            name="complaint-refund"
            layout="inline"
            onFinish={(v) =>
              run(
                'refund',
                { refund_amount: Math.round(v.amount_yuan * 100), ...(v.reason ? { reason: v.reason } : {}) },
                'Refund made',
              )
            }
          >
            <Form.Item
              label="Refund (yuan)"
              name="amount_yuan"
              rules={[{ required: true, message: 'Enter the amount' }]}
              initialValue={c.apply_refund_amount === null ? undefined : c.apply_refund_amount / 100}
            >
              <InputNumber min={0.01} step={0.01} precision={2} style={{ width: 130 }} />
            </Form.Item>
            <Form.Item label="Reason" name="reason">
              <Input style={{ width: 220 }} maxLength={256} />
            </Form.Item>
            <Form.Item>
              <Button htmlType="submit" loading={busy === 'refund'} data-testid="complaint-refund-submit">
                Refund the order
              </Button>
            </Form.Item>
          </Form>
        )}
        <ActionButton
          path={`${path}/complete`}
          label="Complete"
          confirm={`Tell the channel complaint ${c.complaint_id} is dealt with?`}
          done="Complaint completed"
          onDone={onDone}
          testId="complaint-complete"
          size="middle"
        />
      </Space>
    </Card>
  );
}

/** One complaint (SPEC §16): the payer's words, the negotiation, the deadlines, and what was done. */
export function ComplaintDetailPage() {
  const { complaintId = '' } = useParams();
  const detail = useApiData<Complaint>(`/complaints/${seg(complaintId)}`);
  const canAct = useCan('operator');
  const c = detail.data;
  if (!c) {
    return (
      <>
        <PageHeader title={`Complaint ${complaintId}`} />
        <ErrorAlert error={detail.error} onRetry={detail.reload} />
        {detail.loading && <Skeleton active />}
      </>
    );
  }
  return (
    <>
      <PageHeader title={`Complaint ${c.complaint_id}`} />
      <Card style={{ marginBottom: 16 }}>
        <Descriptions column={{ xs: 1, md: 2, xl: 3 }} size="small" data-testid="complaint-fields">
          <Descriptions.Item label="State">
            <StatusBadge status={c.state} />
            {c.overdue && <Tag color="red">overdue</Tag>}
          </Descriptions.Item>
          <Descriptions.Item label="Order">
            {c.trade_no ? (
              <Link to={`/orders/${seg(c.trade_no)}`}>{c.trade_no}</Link>
            ) : (
              <Tag>unknown order</Tag>
            )}
          </Descriptions.Item>
          <Descriptions.Item label="App">{cellText(c.app_id)}</Descriptions.Item>
          <Descriptions.Item label="Merchant">{cellText(c.merchant_id)}</Descriptions.Item>
          <Descriptions.Item label="Channel">{`${c.channel_code} (${c.sub_merchant_no})`}</Descriptions.Item>
          <Descriptions.Item label="Problem">{c.problem_type}</Descriptions.Item>
          <Descriptions.Item label="Asks back (yuan)">
            {c.apply_refund_amount === null ? '—' : yuan(c.apply_refund_amount)}
          </Descriptions.Item>
          <Descriptions.Item label="Complained">{localTime(c.complained_at)}</Descriptions.Item>
          <Descriptions.Item label="Times complained">{c.complaint_times}</Descriptions.Item>
          <Descriptions.Item label="Reply due">{localTime(c.reply_due_at)}</Descriptions.Item>
          <Descriptions.Item label="Replied">{localTime(c.replied_at)}</Descriptions.Item>
          <Descriptions.Item label="Complete due">{localTime(c.complete_due_at)}</Descriptions.Item>
          <Descriptions.Item label="Completed">{localTime(c.completed_at)}</Descriptions.Item>
          <Descriptions.Item label="Refund">
            {c.refund_no ? `${c.refund_no} (¥${yuan(c.refund_amount ?? 0)})` : '—'}
          </Descriptions.Item>
          <Descriptions.Item label="Payer's phone">{cellText(c.payer_phone)}</Descriptions.Item>
        </Descriptions>
        <p data-testid="complaint-detail" style={{ marginBottom: 0 }}>
          <strong>The payer wrote:</strong> {c.detail}
        </p>
      </Card>
      {canAct && c.state !== 'processed' && <ComplaintActions c={c} onDone={detail.reload} />}
      <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Negotiation</h2>} style={{ marginBottom: 16 }}>
        <Timeline
          data-testid="complaint-history"
          items={c.history.map((h, i) => ({
            key: String(i),
            color: h.operator === '商户' ? 'green' : 'blue',
            children: (
              <div>
                {localTime(h.at)} · <Tag>{h.type}</Tag> {h.operator}: {h.details}
                {h.image_count > 0 && ` (${h.image_count} image${h.image_count > 1 ? 's' : ''})`}
              </div>
            ),
          }))}
        />
      </Card>
      <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Actions asked</h2>}>
        <Table
          size="small"
          pagination={false}
          rowKey={(_, i) => String(i)}
          data-testid="complaint-actions"
          dataSource={c.actions}
          locale={{ emptyText: 'Nothing asked yet' }}
          columns={[
            { title: 'At', dataIndex: 'at', render: localTime },
            { title: 'By', dataIndex: 'actor' },
            { title: 'Action', dataIndex: 'action' },
            { title: 'Outcome', dataIndex: 'outcome' },
          ]}
        />
      </Card>
    </>
  );
}
