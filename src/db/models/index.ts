import type { Sequelize } from 'sequelize';
import { DiagnosticStep, initDiagnosticStep } from './diagnostic-step';

export interface Models {
  DiagnosticStep: typeof DiagnosticStep;
}

export function initModels(sequelize: Sequelize): Models {
  initDiagnosticStep(sequelize);
  return { DiagnosticStep };
}
