import { DataTypes, Model, type Sequelize } from 'sequelize';

/** One step of a diagnostic workflow run (see `durapay doctor`): proof that a worker wrote to the database. */
export class DiagnosticStep extends Model {
  declare runId: string;
  declare step: number;
  declare workflowId: string;
  declare recordedAt: Date;
}

export function initDiagnosticStep(sequelize: Sequelize): typeof DiagnosticStep {
  class BoundDiagnosticStep extends DiagnosticStep {}
  BoundDiagnosticStep.init(
    {
      runId: { type: DataTypes.STRING(128), primaryKey: true },
      step: { type: DataTypes.INTEGER, primaryKey: true },
      workflowId: { type: DataTypes.STRING(255), allowNull: false },
      recordedAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'diagnostic_steps', modelName: 'DiagnosticStep' },
  );
  return BoundDiagnosticStep;
}
