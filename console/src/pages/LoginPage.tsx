import { Alert, Button, Card, Form, Input, Typography } from 'antd';
import { useState } from 'react';
import { Navigate, useLocation, useSearchParams } from 'react-router';
import { ApiError, errorMessage, request } from '../api/client';
import type { Session } from '../api/types';
import { usePageTitle } from '../hooks';
import { useSession } from '../session';

interface LoginValues {
  username: string;
  password: string;
  totp_code?: string;
}

/** Only a path of this console: `next` comes from the URL and must not lead elsewhere. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export function LoginPage() {
  usePageTitle('Sign in');
  const { state, signedIn } = useSession();
  const [params] = useSearchParams();
  const location = useLocation();
  const [form] = Form.useForm<LoginValues>();
  const [needsCode, setNeedsCode] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const expired = (location.state as { expired?: boolean } | null)?.expired === true;

  if (state.status === 'signed-in') return <Navigate to={safeNext(params.get('next'))} replace />;

  const submit = async (values: LoginValues) => {
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, string> = { username: values.username, password: values.password };
      if (needsCode && values.totp_code) body.totp_code = values.totp_code.trim();
      const session = await request<Session>('/session', { method: 'POST', body, isLogin: true });
      signedIn(session);
    } catch (err) {
      if (
        err instanceof ApiError &&
        (err.status === 401 || err.status === 400) &&
        /totp/i.test(err.message) &&
        !needsCode
      ) {
        // The password was right and the account has a second factor: ask for the code.
        setNeedsCode(true);
        setError(null);
      } else {
        setError(errorMessage(err));
        if (needsCode) form.setFieldValue('totp_code', '');
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login-main">
      <Card style={{ width: 380 }}>
        <Typography.Title level={1} style={{ fontSize: 22, marginTop: 0 }}>
          Sign in to the durapay console
        </Typography.Title>
        {expired && !error && (
          <Alert
            type="info"
            showIcon
            title="Your session has ended. Sign in again."
            style={{ marginBottom: 16 }}
            data-testid="login-expired"
          />
        )}
        {error && (
          <Alert
            type="error"
            showIcon
            role="alert"
            title={error}
            style={{ marginBottom: 16 }}
            data-testid="login-error"
          />
        )}
        <Form<LoginValues> form={form} name="login" layout="vertical" onFinish={submit} requiredMark={false}>
          <Form.Item
            label="Username"
            name="username"
            rules={[{ required: true, message: 'Enter your username' }]}
          >
            <Input autoComplete="username" data-testid="login-username" autoFocus />
          </Form.Item>
          <Form.Item
            label="Password"
            name="password"
            rules={[{ required: true, message: 'Enter your password' }]}
          >
            <Input.Password autoComplete="current-password" data-testid="login-password" />
          </Form.Item>
          {needsCode && (
            <Form.Item
              label="Authentication code"
              name="totp_code"
              extra="The 6-digit code from your authenticator app."
              rules={[{ required: true, message: 'Enter the code from your authenticator app' }]}
            >
              <Input
                autoComplete="one-time-code"
                inputMode="numeric"
                maxLength={10}
                data-testid="login-totp"
                autoFocus
              />
            </Form.Item>
          )}
          <Button type="primary" htmlType="submit" block loading={busy} data-testid="login-submit">
            Sign in
          </Button>
        </Form>
      </Card>
    </main>
  );
}
