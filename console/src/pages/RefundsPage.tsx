import { Button, Form, Input, Modal, Radio, Typography } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, seg } from '../api/client';
import type { Refund } from '../api/types';
import { FilterBar, type FilterField } from '../components/FilterBar';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime, yuan } from '../format';
import { useFormSubmit, useListPage } from '../hooks';
import { REFUND_STATUSES } from '../options';
import { useCan } from '../session';

const FIELDS: FilterField[] = [
  { kind: 'text', name: 'refund_no', label: 'Refund no' },
  { kind: 'text', name: 'trade_no', label: 'Trade no' },
  { kind: 'text', name: 'app_id', label: 'App id' },
  { kind: 'select', name: 'status', label: 'Status', options: REFUND_STATUSES },
  { kind: 'range', label: 'Created' },
];

interface AbnormalValues {
  method: 'user_bank_card' | 'merchant_bank_card';
  bank_type?: string;
  bank_account?: string;
  real_name?: string;
}

/**
 * Finishes an `abnormal` refund (the channel could not return the money the way it came): to
 * the buyer's bank card, or to the merchant's for the merchant to pay the buyer. The fields are
 * those of `POST /api/v1/pay/refund/abnormal` (src/modules/refunds/schemas.ts).
 */
function AbnormalModal({
  refund,
  onClose,
  onDone,
}: {
  refund: Refund | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const [form] = Form.useForm<AbnormalValues>();
  const method = Form.useWatch('method', form);
  const { busy, submit } = useFormSubmit(
    form,
    async (values) => {
      if (!refund) return null;
      const body: Record<string, string> = { method: values.method };
      if (values.method === 'user_bank_card') {
        body.bank_type = values.bank_type!.trim();
        body.bank_account = values.bank_account!.trim();
        body.real_name = values.real_name!.trim();
      }
      await api.post(`/refunds/${seg(refund.refund_no)}/abnormal`, body);
      return `Refund ${refund.refund_no}: payout requested`;
    },
    onDone,
  );

  return (
    <Modal
      title={refund ? `Finish abnormal refund ${refund.refund_no}` : ''}
      open={refund !== null}
      onCancel={onClose}
      onOk={submit}
      okText="Pay out"
      okButtonProps={{ loading: busy, 'data-testid': 'abnormal-submit' }}
      destroyOnHidden
    >
      {refund && (
        <Typography.Paragraph>
          {yuan(refund.refund_amount)} yuan of order {refund.trade_no} could not be returned the way it was
          paid.
        </Typography.Paragraph>
      )}
      <Form
        form={form}
        name="abnormal"
        layout="vertical"
        initialValues={{ method: 'user_bank_card' }}
        preserve={false}
      >
        <Form.Item label="Pay out to" name="method" rules={[{ required: true }]}>
          <Radio.Group
            options={[
              { value: 'user_bank_card', label: "The buyer's bank card" },
              { value: 'merchant_bank_card', label: "The merchant's bank card" },
            ]}
          />
        </Form.Item>
        {method === 'user_bank_card' && (
          <>
            <Form.Item
              label="Bank code"
              name="bank_type"
              extra="As the channel codes it, e.g. ICBC_DEBIT."
              rules={[
                { required: true, message: 'Enter the bank code' },
                { pattern: /^[A-Za-z0-9_]{1,32}$/, message: '1 to 32 characters of A-Z a-z 0-9 _' },
              ]}
            >
              <Input data-testid="abnormal-bank-type" />
            </Form.Item>
            <Form.Item
              label="Card number"
              name="bank_account"
              rules={[
                { required: true, message: 'Enter the card number' },
                { pattern: /^[0-9]{8,32}$/, message: '8 to 32 digits' },
              ]}
            >
              <Input inputMode="numeric" autoComplete="off" data-testid="abnormal-bank-account" />
            </Form.Item>
            <Form.Item
              label="Card holder's name"
              name="real_name"
              rules={[
                { required: true, message: "Enter the card holder's name" },
                { max: 64, message: 'At most 64 characters' },
              ]}
            >
              <Input autoComplete="off" data-testid="abnormal-real-name" />
            </Form.Item>
          </>
        )}
      </Form>
    </Modal>
  );
}

export function RefundsPage() {
  const list = useListPage<Refund>('/refunds');
  const canAct = useCan('operator');
  const [finishing, setFinishing] = useState<Refund | null>(null);
  return (
    <>
      <PageHeader title="Refunds" />
      <FilterBar name="refunds-filter" fields={FIELDS} filters={list.filters} onSearch={list.setFilters} />
      <ListTable<Refund>
        list={list}
        name="refunds"
        caption="Refunds"
        rowKey={(r) => r.refund_no}
        columns={[
          { title: 'Refund no', dataIndex: 'refund_no' },
          {
            title: 'Trade no',
            dataIndex: 'trade_no',
            render: (v: string) => <Link to={`/orders/${encodeURIComponent(v)}`}>{v}</Link>,
          },
          { title: 'Merchant refund no', dataIndex: 'merchant_refund_no', render: (v) => cellText(v) },
          { title: 'Amount (yuan)', dataIndex: 'refund_amount', align: 'right', render: yuan },
          { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
          { title: 'Reason', dataIndex: 'reason', render: (v) => cellText(v) },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
          ...(canAct
            ? [
                {
                  title: 'Actions',
                  key: 'actions',
                  render: (_: unknown, r: Refund) =>
                    r.status === 'abnormal' ? (
                      <Button
                        size="small"
                        onClick={() => setFinishing(r)}
                        data-testid={`finish-${r.refund_no}`}
                      >
                        Finish
                      </Button>
                    ) : null,
                },
              ]
            : []),
        ]}
      />
      <AbnormalModal
        key={finishing?.refund_no ?? 'closed'}
        refund={finishing}
        onClose={() => setFinishing(null)}
        onDone={() => {
          setFinishing(null);
          list.reload();
        }}
      />
    </>
  );
}
