import type { Sequelize } from 'sequelize';
import { initApp, type App } from './app';
import { initDiagnosticStep, type DiagnosticStep } from './diagnostic-step';
import { initMerchants, type Merchant, type MerchantApplication, type MerchantFile } from './merchant';
import { initNotification, type Notification, type NotificationAttempt } from './notification';
import { initPayments, type Order, type Refund } from './order';

export interface Models {
  DiagnosticStep: typeof DiagnosticStep;
  App: typeof App;
  Notification: typeof Notification;
  NotificationAttempt: typeof NotificationAttempt;
  Order: typeof Order;
  Refund: typeof Refund;
  Merchant: typeof Merchant;
  MerchantFile: typeof MerchantFile;
  MerchantApplication: typeof MerchantApplication;
}

/** Model classes bound to this Sequelize instance only. */
export function initModels(sequelize: Sequelize): Models {
  return {
    DiagnosticStep: initDiagnosticStep(sequelize),
    App: initApp(sequelize),
    ...initNotification(sequelize),
    ...initPayments(sequelize),
    ...initMerchants(sequelize),
  };
}
