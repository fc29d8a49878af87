import { Result, Spin } from 'antd';
import type { ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { useCan, useSession } from './session';
import { ConsoleLayout } from './components/ConsoleLayout';
import { LoginPage } from './pages/LoginPage';
import { HomePage } from './pages/HomePage';
import { OrdersPage } from './pages/OrdersPage';
import { OrderDetailPage } from './pages/OrderDetailPage';
import { RefundsPage } from './pages/RefundsPage';
import { TransfersPage } from './pages/TransfersPage';
import { ComplaintsPage } from './pages/ComplaintsPage';
import { ComplaintDetailPage } from './pages/ComplaintDetailPage';
import { PaymentLinksPage } from './pages/PaymentLinksPage';
import { NotificationsPage } from './pages/NotificationsPage';
import { MerchantsPage } from './pages/MerchantsPage';
import { MerchantDetailPage } from './pages/MerchantDetailPage';
import { ReconciliationPage } from './pages/ReconciliationPage';
import { ReconciliationRunPage } from './pages/ReconciliationRunPage';
import { AppsPage } from './pages/AppsPage';
import { OperatorsPage } from './pages/OperatorsPage';
import { AuditPage } from './pages/AuditPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { usePageTitle } from './hooks';

function Loading() {
  usePageTitle('Loading');
  return (
    <main className="login-main">
      <h1 className="visually-hidden">durapay console</h1>
      <Spin size="large" description="Loading the console" />
    </main>
  );
}

/** The console's pages need a session; without one they send the operator to the login page. */
function RequireSession({ children }: { children: ReactNode }) {
  const { state } = useSession();
  const location = useLocation();
  if (state.status === 'loading') return <Loading />;
  if (state.status === 'signed-out') {
    const next = location.pathname + location.search;
    const query = next === '/' ? '' : `?next=${encodeURIComponent(next)}`;
    return <Navigate to={`/login${query}`} replace state={{ expired: state.expired }} />;
  }
  return <>{children}</>;
}

/** Pages for admins; the server refuses the others anyway, this only says so plainly. */
function AdminOnly({ children }: { children: ReactNode }) {
  const isAdmin = useCan('admin');
  usePageTitle(isAdmin ? null : 'Admins only');
  if (!isAdmin)
    return (
      <Result
        status="403"
        title={<h1 style={{ fontSize: 24, margin: 0 }}>Admins only</h1>}
        subTitle="This page is for operators with the role admin."
      />
    );
  return <>{children}</>;
}

export function AppRoutes() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route
        element={
          <RequireSession>
            <ConsoleLayout />
          </RequireSession>
        }
      >
        <Route index element={<HomePage />} />
        <Route path="orders" element={<OrdersPage />} />
        <Route path="orders/:tradeNo" element={<OrderDetailPage />} />
        <Route path="refunds" element={<RefundsPage />} />
        <Route path="transfers" element={<TransfersPage />} />
        <Route path="payment-links" element={<PaymentLinksPage />} />
        <Route path="complaints" element={<ComplaintsPage />} />
        <Route path="complaints/:complaintId" element={<ComplaintDetailPage />} />
        <Route path="notifications" element={<NotificationsPage />} />
        <Route path="merchants" element={<MerchantsPage />} />
        <Route path="merchants/:merchantId" element={<MerchantDetailPage />} />
        <Route path="reconciliation" element={<ReconciliationPage />} />
        <Route path="reconciliation/runs/:runId" element={<ReconciliationRunPage />} />
        <Route path="apps" element={<AppsPage />} />
        <Route
          path="operators"
          element={
            <AdminOnly>
              <OperatorsPage />
            </AdminOnly>
          }
        />
        <Route
          path="audit"
          element={
            <AdminOnly>
              <AuditPage />
            </AdminOnly>
          }
        />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
      <Route path="*" element={<Navigate to="/" replace />} />
    </Routes>
  );
}
