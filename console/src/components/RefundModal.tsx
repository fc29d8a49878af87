import { Form, Input, InputNumber, Modal, Typography } from 'antd';
import { useFormSubmit } from '../hooks';
import { api, seg } from '../api/client';
import type { Order, Refund } from '../api/types';
import { toFen, toYuan, yuan } from '../format';

/** What can still be refunded: the amount less what succeeded and what is in flight. */
export function refundableRest(order: Order, refunds: readonly Refund[]): number {
  const inFlight = refunds
    .filter((r) => r.status === 'processing')
    .reduce((sum, r) => sum + r.refund_amount, 0);
  return Math.max(0, order.amount - order.refunded_amount - inFlight);
}

/**
 * Refunds an order. `refundNo` (`console-<uuid>`) is made once each time the dialog opens, so a
 * second click, or a retry after a lost answer, asks for the same refund and the server's
 * idempotency on `merchant_refund_no` answers it with the first.
 */
export function RefundModal({
  order,
  rest,
  refundNo,
  onClose,
  onDone,
}: {
  order: Order;
  rest: number;
  refundNo: string | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const [form] = Form.useForm<{ amount: number; reason?: string }>();
  const { busy, submit } = useFormSubmit(
    form,
    async (values) => {
      if (!refundNo) return null;
      const refund = await api.post<Refund>(`/orders/${seg(order.trade_no)}/refund`, {
        merchant_refund_no: refundNo,
        amount: toFen(values.amount),
        ...(values.reason?.trim() ? { reason: values.reason.trim() } : {}),
      });
      return `Refund ${refund?.refund_no ?? ''} of ${yuan(refund?.refund_amount ?? toFen(values.amount))} yuan: ${refund?.status ?? 'requested'}`;
    },
    onDone,
  );

  return (
    <Modal
      title={`Refund order ${order.trade_no}`}
      open={refundNo !== null}
      onCancel={onClose}
      onOk={submit}
      okText="Refund"
      okButtonProps={{ danger: true, loading: busy, 'data-testid': 'refund-submit' }}
      cancelButtonProps={{ disabled: busy }}
      destroyOnHidden
      data-testid="refund-modal"
    >
      <Typography.Paragraph>
        Paid {yuan(order.amount)} yuan; refunded {yuan(order.refunded_amount)} yuan; at most {yuan(rest)} yuan
        can be refunded now.
      </Typography.Paragraph>
      <Form
        form={form}
        name="refund"
        layout="vertical"
        initialValues={{ amount: toYuan(rest) }}
        preserve={false}
      >
        <Form.Item
          label="Amount (yuan)"
          name="amount"
          rules={[
            { required: true, message: 'Enter the amount to refund' },
            {
              validator: (_, v: number | null) =>
                v === null || v === undefined || (toFen(v) >= 1 && toFen(v) <= rest)
                  ? Promise.resolve()
                  : Promise.reject(new Error(`Between 0.01 and ${yuan(rest)} yuan`)),
            },
          ]}
        >
          {/* No min/max: a value out of range is refused with a message, never silently changed. */}
          <InputNumber precision={2} step={1} style={{ width: 200 }} data-testid="refund-amount" />
        </Form.Item>
        <Form.Item label="Reason" name="reason" rules={[{ max: 256, message: 'At most 256 characters' }]}>
          <Input.TextArea rows={2} maxLength={256} data-testid="refund-reason" />
        </Form.Item>
        <Typography.Text type="secondary">
          Refund number: <span data-testid="refund-merchant-no">{refundNo}</span>
        </Typography.Text>
      </Form>
    </Modal>
  );
}
