import type { Sequelize } from 'sequelize';
import { initApp, type App } from './app';
import { initDiagnosticStep, type DiagnosticStep } from './diagnostic-step';
import { initNotification, type Notification, type NotificationAttempt } from './notification';
import { initPayments, type Order, type Refund } from './order';

export interface Models {
  DiagnosticStep: typeof DiagnosticStep;
  App: typeof App;
  Notification: typeof Notification;
  NotificationAttempt: typeof NotificationAttempt;
  Order: typeof Order;
  Refund: typeof Refund;
}

/** Model classes bound to this Sequelize instance only. */
export function initModels(sequelize: Sequelize): Models {
  return {
    DiagnosticStep: initDiagnosticStep(sequelize),
    App: initApp(sequelize),
    ...initNotification(sequelize),
    ...initPayments(sequelize),
  };
}
