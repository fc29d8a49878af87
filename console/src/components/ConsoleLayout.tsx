import { App, Button, Layout, Menu, Popconfirm, Space, Tag, Typography } from 'antd';
import {
  AuditOutlined,
  BellOutlined,
  DashboardOutlined,
  ShopOutlined,
  SwapOutlined,
  LinkOutlined,
  TeamOutlined,
  UndoOutlined,
  WarningOutlined,
  AppstoreOutlined,
  FileSearchOutlined,
  ShoppingCartOutlined,
} from '@ant-design/icons';
import { Link, Outlet, useLocation, useNavigate } from 'react-router';
import { errorMessage } from '../api/client';
import { roleAllows, useSession } from '../session';
import logo from '../logo.svg';

const MENU = [
  { key: '', label: 'Home', icon: <DashboardOutlined aria-hidden /> },
  { key: 'orders', label: 'Orders', icon: <ShoppingCartOutlined aria-hidden /> },
  { key: 'refunds', label: 'Refunds', icon: <UndoOutlined aria-hidden /> },
  { key: 'transfers', label: 'Transfers', icon: <SwapOutlined aria-hidden /> },
  { key: 'payment-links', label: 'Payment links', icon: <LinkOutlined aria-hidden /> },
  { key: 'complaints', label: 'Complaints', icon: <WarningOutlined aria-hidden /> },
  { key: 'notifications', label: 'Notifications', icon: <BellOutlined aria-hidden /> },
  { key: 'merchants', label: 'Merchants', icon: <ShopOutlined aria-hidden /> },
  { key: 'reconciliation', label: 'Reconciliation', icon: <FileSearchOutlined aria-hidden /> },
  { key: 'apps', label: 'Apps', icon: <AppstoreOutlined aria-hidden /> },
  { key: 'operators', label: 'Operators', icon: <TeamOutlined aria-hidden />, admin: true },
  { key: 'audit', label: 'Audit log', icon: <AuditOutlined aria-hidden />, admin: true },
];

/** The signed-in console: the side menu, the header with the operator, and the page. */
export function ConsoleLayout() {
  const { state, signOut, signOutEverywhere } = useSession();
  const { message } = App.useApp();
  const location = useLocation();
  const navigate = useNavigate();
  if (state.status !== 'signed-in') return null;
  const { operator } = state.session;
  const section = location.pathname.split('/')[1] ?? '';
  const items = MENU.filter((m) => !m.admin || roleAllows(operator.role, 'admin')).map((m) => ({
    key: m.key,
    icon: m.icon,
    label: (
      <Link to={`/${m.key}`} data-testid={`nav-${m.key || 'home'}`}>
        {m.label}
      </Link>
    ),
  }));

  return (
    <Layout style={{ minHeight: '100vh' }}>
      <a className="skip-link" href="#content">
        Skip to the page
      </a>
      <Layout.Sider width={220} breakpoint="lg" collapsedWidth={0}>
        <div className="brand">
          <img src={logo} alt="durapay logo" />
          <span>durapay console</span>
        </div>
        <nav aria-label="Main menu">
          <Menu theme="dark" mode="inline" selectedKeys={[section]} items={items} />
        </nav>
      </Layout.Sider>
      <Layout>
        <Layout.Header style={{ display: 'flex', justifyContent: 'flex-end', alignItems: 'center' }}>
          <Space size="middle" wrap>
            <span data-testid="current-operator">
              Signed in as <Typography.Text strong>{operator.username}</Typography.Text>
            </span>
            <Tag data-testid="current-role">{operator.role}</Tag>
            <Button
              data-testid="sign-out"
              onClick={() => {
                signOut()
                  .then(() => navigate('/login'))
                  .catch((err: unknown) => message.error(errorMessage(err)));
              }}
            >
              Sign out
            </Button>
            <Popconfirm
              title="Sign out everywhere?"
              description="Every session of yours ends, on every device."
              okText="Sign out everywhere"
              onConfirm={() =>
                signOutEverywhere()
                  .then((n) => {
                    message.success(`${n} session${n === 1 ? '' : 's'} ended`);
                    navigate('/login');
                  })
                  .catch((err: unknown) => message.error(errorMessage(err)))
              }
            >
              <Button danger data-testid="sign-out-everywhere">
                Sign out everywhere
              </Button>
            </Popconfirm>
          </Space>
        </Layout.Header>
        <Layout.Content id="content" style={{ margin: 24 }} tabIndex={-1}>
          <Outlet />
        </Layout.Content>
      </Layout>
    </Layout>
  );
}
