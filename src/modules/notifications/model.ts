import { DataTypes, Model, type Sequelize } from 'sequelize';
import { modelsFor } from '../../platform/db';
import type { NotificationEvent, NotificationStatus } from './rules';

export class Notification extends Model {
  declare notificationId: string;
  declare appId: string;
  declare eventKey: string;
  declare eventType: NotificationEvent;
  declare tradeNo: string | null;
  declare refundNo: string | null;
  declare applicationId: string | null;
  declare url: string;
  declare body: string;
  declare status: NotificationStatus;
  declare series: number;
  declare seriesToken: string | null;
  declare attemptCount: number;
  declare nextAttemptAt: Date | null;
  declare lastError: string | null;
  declare deliveredAt: Date | null;
  declare createdAt: Date;
  declare updatedAt: Date;
  declare attempts?: NotificationAttempt[];
}

export class NotificationAttempt extends Model {
  declare id: string;
  declare notificationId: string;
  declare series: number;
  declare attempt: number;
  declare attemptedAt: Date;
  declare httpStatus: number | null;
  declare latencyMs: number;
  declare error: string | null;
  declare responseExcerpt: string | null;
}

export function initNotification(sequelize: Sequelize): {
  Notification: typeof Notification;
  NotificationAttempt: typeof NotificationAttempt;
} {
  class BoundNotification extends Notification {}
  class BoundNotificationAttempt extends NotificationAttempt {}
  BoundNotification.init(
    {
      notificationId: { type: DataTypes.STRING(40), primaryKey: true },
      appId: { type: DataTypes.STRING(32), allowNull: false },
      eventKey: { type: DataTypes.STRING(200), allowNull: false },
      eventType: { type: DataTypes.STRING(64), allowNull: false },
      tradeNo: { type: DataTypes.STRING(32) },
      refundNo: { type: DataTypes.STRING(32) },
      applicationId: { type: DataTypes.STRING(64) },
      url: { type: DataTypes.STRING(512), allowNull: false },
      body: { type: DataTypes.TEXT, allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      series: { type: DataTypes.INTEGER, allowNull: false },
      seriesToken: { type: DataTypes.STRING(200) },
      attemptCount: { type: DataTypes.INTEGER, allowNull: false },
      nextAttemptAt: { type: DataTypes.DATE },
      lastError: { type: DataTypes.TEXT },
      deliveredAt: { type: DataTypes.DATE },
      createdAt: { type: DataTypes.DATE, allowNull: false },
      updatedAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'notifications', timestamps: true, modelName: 'Notification' },
  );
  BoundNotificationAttempt.init(
    {
      id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
      notificationId: { type: DataTypes.STRING(40), allowNull: false },
      series: { type: DataTypes.INTEGER, allowNull: false },
      attempt: { type: DataTypes.INTEGER, allowNull: false },
      attemptedAt: { type: DataTypes.DATE, allowNull: false },
      httpStatus: { type: DataTypes.INTEGER },
      latencyMs: { type: DataTypes.INTEGER, allowNull: false },
      error: { type: DataTypes.TEXT },
      responseExcerpt: { type: DataTypes.TEXT },
    },
    { sequelize, tableName: 'notification_attempts', modelName: 'NotificationAttempt' },
  );
  BoundNotification.hasMany(BoundNotificationAttempt, { foreignKey: 'notificationId', as: 'attempts' });
  return { Notification: BoundNotification, NotificationAttempt: BoundNotificationAttempt };
}

/** This module's models bound to this connection. */
export const notificationModels = (sequelize: Sequelize) => modelsFor(sequelize, initNotification);
