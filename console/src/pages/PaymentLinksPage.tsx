import { App, Button, Card, Form, Input, InputNumber, Space, Typography } from 'antd';
import { useState } from 'react';
import { api, errorMessage, seg } from '../api/client';
import type { PaymentLink } from '../api/types';
import { ActionButton } from '../components/actions';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime, yuan } from '../format';
import { useListPage } from '../hooks';
import { useCan } from '../session';

const FIELDS: FilterField[] = [
  { kind: 'text', name: 'app_id', label: 'App id' },
  { kind: 'text', name: 'merchant_id', label: 'Merchant id' },
  {
    kind: 'select',
    name: 'status',
    label: 'Status',
    options: [
      { value: 'active', label: 'active' },
      { value: 'deactivated', label: 'deactivated' },
    ],
  },
];

interface LinkForm {
  app_id: string;
  merchant_id?: string;
  amount_yuan: number;
  subject: string;
  notify_url: string;
  max_payments?: number;
}

/** Makes a payment link for an app (the API's create, with the amount in yuan). */
function CreateLinkForm({ onDone }: { onDone: () => void }) {
  const [form] = Form.useForm<LinkForm>();
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<PaymentLink | null>(null);
  const { message } = App.useApp();

  const submit = async (v: LinkForm) => {
    setBusy(true);
    try {
      const link = await api.post<PaymentLink>('/payment-links', {
        app_id: v.app_id.trim(),
        ...(v.merchant_id?.trim() ? { merchant_id: v.merchant_id.trim() } : {}),
        amount: Math.round(v.amount_yuan * 100),
        subject: v.subject,
        notify_url: v.notify_url.trim(),
        ...(v.max_payments ? { max_payments: v.max_payments } : {}),
      });
      message.success(`Link ${link.link_id} made`);
      setMade(link);
      form.resetFields();
      onDone();
    } catch (err) {
      message.error(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Make a link</h2>} style={{ marginBottom: 16 }}>
      <Form form={form} name="create-link" layout="inline" onFinish={submit} style={{ rowGap: 12 }}>
        <Form.Item label="App id" name="app_id" rules={[{ required: true, message: 'Enter the app id' }]}>
          <Input style={{ width: 200 }} />
        </Form.Item>
        <Form.Item label="Merchant id" name="merchant_id">
          <Input style={{ width: 160 }} />
        </Form.Item>
        <Form.Item
          label="Amount (yuan)"
          name="amount_yuan"
          rules={[{ required: true, message: 'Enter the amount' }]}
        >
          <InputNumber min={0.01} step={0.01} precision={2} style={{ width: 130 }} />
        </Form.Item>
        <Form.Item label="Subject" name="subject" rules={[{ required: true, message: 'Enter the subject' }]}>
          <Input style={{ width: 220 }} maxLength={128} />
        </Form.Item>
        <Form.Item
          label="Notify URL"
          name="notify_url"
          rules={[{ required: true, message: 'Enter where payments are notified' }]}
        >
          <Input style={{ width: 280 }} />
        </Form.Item>
        <Form.Item label="Max payments" name="max_payments">
          <InputNumber min={1} style={{ width: 110 }} />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit" loading={busy} data-testid="create-link-submit">
            Make link
          </Button>
        </Form.Item>
      </Form>
      {made && (
        <Space align="start" style={{ marginTop: 16 }} data-testid="made-link">
          <img src={made.qr_code} alt={`QR code of ${made.link_id}`} width={128} height={128} />
          <div>
            <Typography.Text strong>{made.subject}</Typography.Text> · ¥{yuan(made.amount)}
            <br />
            <Typography.Text copyable>{made.url}</Typography.Text>
          </div>
        </Space>
      )}
    </Card>
  );
}

/** Every app's payment links (SPEC §15): made, paid, deactivated. */
export function PaymentLinksPage() {
  const list = useListPage<PaymentLink>('/payment-links');
  const canAct = useCan('operator');
  return (
    <>
      <PageHeader title="Payment links" />
      {canAct && <CreateLinkForm onDone={list.reload} />}
      <FilterBar name="links-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<PaymentLink>
        list={list}
        name="links"
        caption="Payment links"
        rowKey={(l) => l.link_id}
        columns={[
          { title: 'Link id', dataIndex: 'link_id' },
          { title: 'App', dataIndex: 'app_id' },
          { title: 'Merchant', dataIndex: 'merchant_id', render: (v) => cellText(v) },
          { title: 'Subject', dataIndex: 'subject' },
          { title: 'Amount (yuan)', dataIndex: 'amount', align: 'right', render: yuan },
          {
            title: 'Paid',
            key: 'paid',
            align: 'right',
            render: (_: unknown, l: PaymentLink) => `${l.paid_count} / ${l.max_payments}`,
          },
          { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
          { title: 'Expires', dataIndex: 'expires_at', render: localTime },
          {
            title: 'URL',
            dataIndex: 'url',
            // The page's path, shortened, with the whole URL to copy. No `ellipsis`: its measuring
            // copy of the text holds a second, hidden copy button (axe: aria-hidden-focus).
            render: (v: string) => (
              <Typography.Text copyable={{ text: v }}>{`…${new URL(v).pathname}`}</Typography.Text>
            ),
          },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
          ...(canAct
            ? [
                {
                  title: 'Actions',
                  key: 'actions',
                  render: (_: unknown, l: PaymentLink) =>
                    l.status !== 'active' ? null : (
                      <ActionButton
                        path={`/payment-links/${seg(l.link_id)}/deactivate`}
                        label="Deactivate"
                        confirm={`Deactivate link ${l.link_id}? Buyers who open it are told so.`}
                        done="Link deactivated"
                        onDone={list.reload}
                        testId={`deactivate-${l.link_id}`}
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
