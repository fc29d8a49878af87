import { DataTypes, Model, type Sequelize } from 'sequelize';
import type { AppStatus, Scope } from '../../domain/apps';

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

export function initApp(sequelize: Sequelize): void {
  App.init(
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
    { sequelize, tableName: 'apps', timestamps: true },
  );
}
