import { DataTypes } from 'sequelize';
import type { Migration } from '.';

export const diagnosticSteps: Migration = {
  name: '0001-diagnostic-steps',
  async up({ context: qi }) {
    await qi.createTable('diagnostic_steps', {
      run_id: { type: DataTypes.STRING(128), primaryKey: true },
      step: { type: DataTypes.INTEGER, primaryKey: true },
      workflow_id: { type: DataTypes.STRING(255), allowNull: false },
      recorded_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('diagnostic_steps');
  },
};
