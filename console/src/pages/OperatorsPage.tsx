import { App, Button, Form, Input, Modal, Popconfirm, Select, Space, Tag, Typography } from 'antd';
import { useState } from 'react';
import { api, errorMessage, seg } from '../api/client';
import type { OperatorRow, Role } from '../api/types';
import { ROLES } from '../options';
import { ActionButton } from '../components/actions';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { localTime } from '../format';
import { useFormSubmit, useListPage } from '../hooks';
import { useSession } from '../session';

const ROLE_OPTIONS = ROLES.map((r) => ({ value: r, label: r }));
const isDisabled = (o: OperatorRow) => o.disabled;

/** What the server answers for a new operator or a reset: the password, when it made one. */
interface WithPassword {
  operator?: OperatorRow;
  password?: string;
}

/** Shows a password the server made, once, to hand on. */
function useShowPassword() {
  const { modal } = App.useApp();
  return (username: string, password: string | undefined) => {
    if (!password) return;
    modal.info({
      title: `The password of ${username}`,
      content: (
        <>
          <Typography.Paragraph>
            It is shown only now: hand it on over a channel you trust.
          </Typography.Paragraph>
          <Typography.Paragraph copyable={{ text: password }} code data-testid="generated-password">
            {password}
          </Typography.Paragraph>
        </>
      ),
    });
  };
}

function CreateOperatorModal({
  open,
  onClose,
  onDone,
}: {
  open: boolean;
  onClose: () => void;
  onDone: () => void;
}) {
  const [form] = Form.useForm<{ username: string; role: Role; password?: string }>();
  const showPassword = useShowPassword();
  const { busy, submit } = useFormSubmit(
    form,
    async (values) => {
      const username = values.username.trim();
      const made = await api.post<WithPassword>('/operators', {
        username,
        role: values.role,
        ...(values.password ? { password: values.password } : {}),
      });
      showPassword(username, made?.password);
      return `Operator ${username} created`;
    },
    onDone,
  );
  return (
    <Modal
      title="New operator"
      open={open}
      onCancel={onClose}
      onOk={submit}
      okText="Create"
      okButtonProps={{ loading: busy, 'data-testid': 'operator-create-submit' }}
      destroyOnHidden
    >
      <Form
        form={form}
        name="operator-create"
        layout="vertical"
        initialValues={{ role: 'viewer' }}
        preserve={false}
      >
        <Form.Item
          label="Username"
          name="username"
          rules={[{ required: true, whitespace: true, message: 'Enter a username' }]}
        >
          <Input autoComplete="off" data-testid="operator-username" />
        </Form.Item>
        <Form.Item label="Role" name="role" rules={[{ required: true }]}>
          <Select options={ROLE_OPTIONS} data-testid="operator-role" />
        </Form.Item>
        <Form.Item
          label="Password"
          name="password"
          extra="Leave it empty to have the server make one, shown once."
        >
          <Input.Password autoComplete="new-password" data-testid="operator-password" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

function RoleModal({
  operator,
  onClose,
  onDone,
}: {
  operator: OperatorRow | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const [form] = Form.useForm<{ role: Role }>();
  const { busy, submit } = useFormSubmit(
    form,
    async ({ role }) => {
      if (!operator) return null;
      await api.post(`/operators/${seg(operator.operator_id)}/role`, { role });
      return `${operator.username} is now ${role}`;
    },
    onDone,
  );
  return (
    <Modal
      title={operator ? `Change the role of ${operator.username}` : ''}
      open={operator !== null}
      onCancel={onClose}
      onOk={submit}
      okText="Change role"
      okButtonProps={{ loading: busy, 'data-testid': 'operator-role-submit' }}
      destroyOnHidden
    >
      <Form
        form={form}
        name="operator-role"
        layout="vertical"
        initialValues={{ role: operator?.role }}
        preserve={false}
      >
        <Form.Item label="Role" name="role" rules={[{ required: true }]}>
          <Select options={ROLE_OPTIONS} data-testid="operator-role-select" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

export function OperatorsPage() {
  const list = useListPage<OperatorRow>('/operators');
  const { state } = useSession();
  const me = state.status === 'signed-in' ? state.session.operator.operator_id : undefined;
  const [creating, setCreating] = useState(false);
  const [changing, setChanging] = useState<OperatorRow | null>(null);
  const showPassword = useShowPassword();
  const { message } = App.useApp();

  const resetPassword = async (o: OperatorRow) => {
    try {
      const done = await api.post<WithPassword>(`/operators/${seg(o.operator_id)}/reset-password`, {});
      message.success(`The password of ${o.username} was reset`);
      showPassword(o.username, done?.password);
      list.reload();
    } catch (err) {
      message.error(errorMessage(err));
    }
  };

  return (
    <>
      <PageHeader
        title="Operators"
        extra={
          <Button type="primary" onClick={() => setCreating(true)} data-testid="operator-create">
            New operator
          </Button>
        }
      />
      <ListTable<OperatorRow>
        list={list}
        name="operators"
        caption="Operators"
        rowKey={(o) => o.operator_id}
        columns={[
          {
            title: 'Username',
            dataIndex: 'username',
            render: (v: string, o) => (
              <>
                {v} {o.operator_id === me && <Tag>you</Tag>}
              </>
            ),
          },
          { title: 'Role', dataIndex: 'role' },
          {
            title: 'Status',
            key: 'status',
            render: (_: unknown, o) => <StatusBadge status={isDisabled(o) ? 'disabled' : 'active'} />,
          },
          { title: 'TOTP', dataIndex: 'totp_enabled', render: (v?: boolean) => (v ? 'on' : 'off') },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
          {
            title: 'Actions',
            key: 'actions',
            // An admin does not demote or disable themself here: that is for another admin.
            render: (_: unknown, o: OperatorRow) =>
              o.operator_id === me ? null : isDisabled(o) ? (
                <ActionButton
                  path={`/operators/${seg(o.operator_id)}/enable`}
                  label="Enable"
                  confirm={`Let ${o.username} sign in again?`}
                  done={`${o.username} enabled`}
                  onDone={list.reload}
                  testId={`enable-operator-${o.operator_id}`}
                />
              ) : (
                <Space wrap>
                  <Button
                    size="small"
                    onClick={() => setChanging(o)}
                    data-testid={`change-role-${o.operator_id}`}
                  >
                    Change role
                  </Button>
                  <Popconfirm
                    title={`Reset the password of ${o.username}?`}
                    description="A new one is made and shown once; their sessions end."
                    okText="Reset"
                    onConfirm={() => resetPassword(o)}
                  >
                    <Button size="small" data-testid={`reset-password-${o.operator_id}`}>
                      Reset password
                    </Button>
                  </Popconfirm>
                  <ActionButton
                    path={`/operators/${seg(o.operator_id)}/disable`}
                    label="Disable"
                    confirm={`Disable ${o.username}? Their sessions end and they can no longer sign in.`}
                    done={`${o.username} disabled`}
                    onDone={list.reload}
                    testId={`disable-operator-${o.operator_id}`}
                    danger
                  />
                </Space>
              ),
          },
        ]}
      />
      <CreateOperatorModal
        key={String(creating)}
        open={creating}
        onClose={() => setCreating(false)}
        onDone={() => {
          setCreating(false);
          list.reload();
        }}
      />
      <RoleModal
        key={changing?.operator_id ?? 'closed'}
        operator={changing}
        onClose={() => setChanging(null)}
        onDone={() => {
          setChanging(null);
          list.reload();
        }}
      />
    </>
  );
}
