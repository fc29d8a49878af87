import {
  App,
  Button,
  Card,
  Descriptions,
  Empty,
  Form,
  Input,
  InputNumber,
  Select,
  Skeleton,
  Table,
  Typography,
} from 'antd';
import { useState, type HTMLAttributes } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { API_BASE, api, errorMessage, seg, withQuery } from '../api/client';
import type { Application, ChannelAccount, MerchantCode, MerchantDetail } from '../api/types';
import { AutoTable, fieldTitle, renderField } from '../components/AutoTable';
import { DetailsHeader, ErrorAlert, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime, yuan } from '../format';
import { ActionButton } from '../components/actions';
import { useApiData } from '../hooks';
import { ACCOUNT_FIELDS } from '../options';
import { useCan } from '../session';

/** The channels whose merchants have accounts there, as the channels declare them. */
const ACCOUNT_CHANNELS = Object.keys(ACCOUNT_FIELDS);

/**
 * What names an account in the list: its number in the field its channel declares, or, for a
 * token, the account it was confirmed for (`user_id`), else the token masked.
 */
function accountShown(a: ChannelAccount): unknown {
  const view = a as Record<string, unknown>;
  for (const f of ACCOUNT_FIELDS[a.channel_code] ?? []) {
    const value = f.token ? (view.user_id ?? view[f.name]) : view[f.name];
    if (value !== undefined && value !== null) return value;
  }
  return null;
}

/** Attaches a merchant's account at a channel (the API's attach body, with the channel named). */
function AttachForm({
  merchantId,
  appId,
  onDone,
}: {
  merchantId: string;
  appId?: string;
  onDone: () => void;
}) {
  const [form] = Form.useForm<Record<string, string>>();
  const channel = Form.useWatch('channel_code', form) as string | undefined;
  const [busy, setBusy] = useState(false);
  const { message } = App.useApp();
  const fields = channel ? (ACCOUNT_FIELDS[channel] ?? []) : [];

  const submit = async (values: Record<string, string>) => {
    const body: Record<string, string> = { channel_code: values.channel_code! };
    if (appId) body.app_id = appId;
    for (const f of fields) if (values[f.name]?.trim()) body[f.name] = values[f.name]!.trim();
    setBusy(true);
    try {
      await api.post(`/merchants/${seg(merchantId)}/channel-accounts`, body);
      message.success(`Account at ${body.channel_code} attached`);
      form.resetFields();
      onDone();
    } catch (err) {
      message.error(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Form form={form} name="attach" layout="inline" onFinish={submit} style={{ rowGap: 12 }}>
      <Form.Item
        label="Channel"
        name="channel_code"
        rules={[{ required: true, message: 'Choose a channel' }]}
      >
        <Select style={{ width: 160 }} options={ACCOUNT_CHANNELS.map((c) => ({ value: c, label: c }))} />
      </Form.Item>
      {fields.map((f) => (
        <Form.Item
          key={f.name}
          label={f.label}
          name={f.name}
          rules={
            fields.length === 1 ? [{ required: true, message: `Enter the ${f.label.toLowerCase()}` }] : []
          }
        >
          <Input style={{ width: 220 }} data-testid={`attach-${f.name}`} />
        </Form.Item>
      ))}
      <Form.Item>
        <Button type="primary" htmlType="submit" loading={busy} data-testid="attach-submit">
          Attach
        </Button>
      </Form.Item>
    </Form>
  );
}

/** A merchant's standing codes (码牌): listed, made, disabled, and printable as PNG. */
function StandingCodes({
  merchantId,
  appId,
  canAct,
}: {
  merchantId: string;
  appId: string;
  canAct: boolean;
}) {
  const codes = useApiData<{ list: MerchantCode[] }>(`/merchants/${seg(merchantId)}/codes`, {
    app_id: appId,
  });
  const [form] = Form.useForm<{ name: string; notify_url: string; max_yuan?: number }>();
  const [busy, setBusy] = useState(false);
  const { message } = App.useApp();

  const submit = async (v: { name: string; notify_url: string; max_yuan?: number }) => {
    setBusy(true);
    try {
      const made = await api.post<MerchantCode>(`/merchants/${seg(merchantId)}/codes`, {
        app_id: appId,
        name: v.name,
        notify_url: v.notify_url.trim(),
        ...(v.max_yuan ? { max_amount: Math.round(v.max_yuan * 100) } : {}),
      });
      message.success(`Code ${made.code_id} made`);
      form.resetFields();
      codes.reload();
    } catch (err) {
      message.error(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Standing codes</h2>} style={{ marginBottom: 16 }}>
      <ErrorAlert error={codes.error} onRetry={codes.reload} />
      <Table<MerchantCode>
        size="small"
        pagination={false}
        rowKey="code_id"
        loading={codes.loading}
        dataSource={codes.data?.list ?? []}
        locale={{ emptyText: 'No standing code' }}
        onRow={(c) => ({ 'data-testid': `code-row-${c.code_id}` }) as HTMLAttributes<HTMLElement>}
        columns={[
          {
            title: 'QR',
            key: 'qr',
            render: (_: unknown, c) => (
              <img src={c.qr_code} alt={`QR code of ${c.name}`} width={72} height={72} />
            ),
          },
          { title: 'Code id', dataIndex: 'code_id' },
          { title: 'Name', dataIndex: 'name' },
          {
            title: 'Amounts (yuan)',
            key: 'amounts',
            render: (_: unknown, c) => `${yuan(c.min_amount)} – ${yuan(c.max_amount)}`,
          },
          { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
          {
            title: 'Print',
            key: 'print',
            render: (_: unknown, c) => (
              <a
                href={withQuery(`${API_BASE}/merchants/${seg(merchantId)}/codes/${seg(c.code_id)}/qr.png`, {
                  app_id: appId,
                })}
                download
              >
                PNG
              </a>
            ),
          },
          ...(canAct
            ? [
                {
                  title: 'Actions',
                  key: 'actions',
                  render: (_: unknown, c: MerchantCode) =>
                    c.status !== 'active' ? null : (
                      <ActionButton
                        path={`/merchants/${seg(merchantId)}/codes/${seg(c.code_id)}/disable`}
                        body={{ app_id: appId }}
                        label="Disable"
                        confirm={`Disable ${c.name}? Buyers who scan it are told so.`}
                        done="Code disabled"
                        onDone={codes.reload}
                        testId={`disable-${c.code_id}`}
                        danger
                      />
                    ),
                },
              ]
            : []),
        ]}
      />
      {canAct && (
        <>
          <Typography.Title level={3} style={{ fontSize: 15, marginTop: 16 }}>
            Make a code
          </Typography.Title>
          <Form form={form} name="create-code" layout="inline" onFinish={submit} style={{ rowGap: 12 }}>
            <Form.Item
              label="Name"
              name="name"
              rules={[{ required: true, message: 'Enter the name buyers see' }]}
            >
              <Input style={{ width: 200 }} maxLength={64} />
            </Form.Item>
            <Form.Item
              label="Notify URL"
              name="notify_url"
              rules={[{ required: true, message: 'Enter where payments are notified' }]}
            >
              <Input style={{ width: 280 }} />
            </Form.Item>
            <Form.Item label="Most a buyer pays (yuan)" name="max_yuan">
              <InputNumber min={0.01} step={0.01} precision={2} style={{ width: 130 }} />
            </Form.Item>
            <Form.Item>
              <Button type="primary" htmlType="submit" loading={busy} data-testid="create-code-submit">
                Make code
              </Button>
            </Form.Item>
          </Form>
        </>
      )}
    </Card>
  );
}

export function MerchantDetailPage() {
  const { merchantId = '' } = useParams();
  const [params] = useSearchParams();
  const appId = params.get('app_id') ?? undefined;
  const detail = useApiData<MerchantDetail>(`/merchants/${seg(merchantId)}`, { app_id: appId });
  const canAct = useCan('operator');
  const d = detail.data;
  const m = d?.merchant;

  return (
    <>
      <PageHeader title={m ? `Merchant ${m.merchant_name}` : `Merchant ${merchantId}`} />
      <ErrorAlert error={detail.error} onRetry={detail.reload} />
      {!d || !m ? (
        detail.loading && <Skeleton active />
      ) : (
        <>
          <Card style={{ marginBottom: 16 }}>
            <Descriptions
              bordered
              size="small"
              column={{ xs: 1, md: 2, xl: 3 }}
              items={Object.entries(m)
                .filter(([k]) => k !== 'channel_accounts')
                .map(([k, v]) => ({
                  key: k,
                  label: fieldTitle(k),
                  children:
                    v !== null && typeof v === 'object' ? (
                      <code>{JSON.stringify(v)}</code>
                    ) : (
                      renderField(k, v)
                    ),
                }))}
            />
          </Card>

          <Card
            title={<h2 style={{ fontSize: 16, margin: 0 }}>Channel accounts</h2>}
            style={{ marginBottom: 16 }}
          >
            <Table<ChannelAccount>
              size="small"
              pagination={false}
              rowKey="channel_code"
              dataSource={d.channel_accounts ?? []}
              locale={{ emptyText: 'No account attached' }}
              onRow={(a) =>
                ({ 'data-testid': `account-row-${a.channel_code}` }) as HTMLAttributes<HTMLElement>
              }
              columns={[
                { title: 'Channel', dataIndex: 'channel_code' },
                {
                  title: 'Account',
                  key: 'account',
                  render: (_: unknown, a) => cellText(accountShown(a)),
                },
                { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
                { title: 'Source', dataIndex: 'source', render: (v) => cellText(v) },
                { title: 'Activated', dataIndex: 'activated_at', render: localTime },
                { title: 'Updated', dataIndex: 'updated_at', render: localTime },
              ]}
            />
            {canAct && (
              <>
                <Typography.Title level={3} style={{ fontSize: 15, marginTop: 16 }}>
                  Attach an account
                </Typography.Title>
                <AttachForm
                  merchantId={m.merchant_id}
                  appId={typeof m.app_id === 'string' ? m.app_id : appId}
                  onDone={detail.reload}
                />
              </>
            )}
          </Card>

          {typeof m.app_id === 'string' && (
            <StandingCodes merchantId={m.merchant_id} appId={m.app_id} canAct={canAct} />
          )}

          <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>Onboarding applications</h2>}>
            <Table<Application>
              size="small"
              pagination={false}
              rowKey="application_id"
              dataSource={d.applications ?? []}
              locale={{ emptyText: 'No applications' }}
              onRow={(a) =>
                ({ 'data-testid': `application-row-${a.application_id}` }) as HTMLAttributes<HTMLElement>
              }
              expandable={{
                columnTitle: <DetailsHeader />,
                expandedRowRender: (a) =>
                  (a.audit_history ?? []).length === 0 ? (
                    <Empty description="No audit history" />
                  ) : (
                    <AutoTable rows={a.audit_history ?? []} name={`audit-history-${a.application_id}`} />
                  ),
              }}
              columns={[
                { title: 'Application id', dataIndex: 'application_id' },
                { title: 'Channel', dataIndex: 'channel_code' },
                { title: 'Status', dataIndex: 'status', render: (v: string) => <StatusBadge status={v} /> },
                { title: 'Reject reason', dataIndex: 'reject_reason', render: (v) => cellText(v) },
                { title: 'Submitted', dataIndex: 'submitted_at', render: localTime },
                { title: 'Updated', dataIndex: 'updated_at', render: localTime },
                { title: 'Finished', dataIndex: 'finished_at', render: localTime },
              ]}
            />
          </Card>
        </>
      )}
    </>
  );
}
