import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App as AntApp, ConfigProvider } from 'antd';
import enUS from 'antd/es/locale/en_US';
import { SessionProvider } from './session';
import { AppRoutes } from './App';
import { theme } from './theme';
import './styles.css';

// The date pickers' month and year buttons read "Dec" and "2026" but are labelled "Choose a
// month" / "Choose a year": screen readers and voice control go by the visible text instead.
const locale = {
  ...enUS,
  DatePicker: enUS.DatePicker && {
    ...enUS.DatePicker,
    lang: { ...enUS.DatePicker.lang, monthSelect: '', yearSelect: '', decadeSelect: '' },
  },
};

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <ConfigProvider locale={locale} theme={theme}>
      <AntApp>
        <BrowserRouter basename="/console">
          <SessionProvider>
            <AppRoutes />
          </SessionProvider>
        </BrowserRouter>
      </AntApp>
    </ConfigProvider>
  </StrictMode>,
);
