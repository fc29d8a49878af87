import { DataTypes, Model, type Sequelize } from 'sequelize';
import { modelsFor } from '../../platform/db';
import type { AppStatus, Scope } from './rules';

/** Column types of `apps`; each Database defines its own subclass (see initApp). */
export class App extends Model {
  declare appId: string;
  declare name: string;
  declare secretCiphertext: string;
  declare webhookSecretCiphertext: string;
  declare scopes: Scope[];
  declare status: AppStatus;
  declare createdAt: Date;
  declare updatedAt: Date;
}

/**
 * Model classes are bound to one Sequelize instance when initialised, so each Database gets
 * classes of its own: two connections in one process (tests do this) must not share them.
 */
export function initApp(sequelize: Sequelize): typeof App {
  class BoundApp extends App {}
  BoundApp.init(
    {
      appId: { type: DataTypes.STRING(32), primaryKey: true },
      name: { type: DataTypes.STRING(128), allowNull: false },
      secretCiphertext: { type: DataTypes.TEXT, allowNull: false },
      webhookSecretCiphertext: { type: DataTypes.TEXT, allowNull: false },
      scopes: { type: DataTypes.ARRAY(DataTypes.STRING(32)), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      createdAt: { type: DataTypes.DATE, allowNull: false },
      updatedAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'apps', timestamps: true, modelName: 'App' },
  );
  return BoundApp;
}

/** The App model bound to this connection. */
export const appModels = (sequelize: Sequelize) => ({ App: modelsFor(sequelize, initApp) });
