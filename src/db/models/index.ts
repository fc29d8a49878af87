import type { Sequelize } from 'sequelize';
import { App, initApp } from './app';
import { DiagnosticStep, initDiagnosticStep } from './diagnostic-step';

export interface Models {
  DiagnosticStep: typeof DiagnosticStep;
  App: typeof App;
}

export function initModels(sequelize: Sequelize): Models {
  initDiagnosticStep(sequelize);
  initApp(sequelize);
  return { DiagnosticStep, App };
}
