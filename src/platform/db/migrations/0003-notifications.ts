import { DataTypes } from 'sequelize';
import type { Migration } from '.';

export const notifications: Migration = {
  name: '0003-notifications',
  async up({ context: qi }) {
    await qi.createTable('notifications', {
      notification_id: { type: DataTypes.STRING(40), primaryKey: true },
      app_id: { type: DataTypes.STRING(32), allowNull: false, references: { model: 'apps', key: 'app_id' } },
      // What the producer calls this event (e.g. "payment.succeeded:P2026…"): publishing the same
      // event twice yields the same notification.
      event_key: { type: DataTypes.STRING(200), allowNull: false },
      event_type: { type: DataTypes.STRING(64), allowNull: false },
      trade_no: { type: DataTypes.STRING(32) },
      refund_no: { type: DataTypes.STRING(32) },
      application_id: { type: DataTypes.STRING(64) },
      url: { type: DataTypes.STRING(512), allowNull: false },
      // The exact bytes sent on every attempt, so the signature covers the same body each time.
      body: { type: DataTypes.TEXT, allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      series: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      series_token: { type: DataTypes.STRING(200) },
      attempt_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      next_attempt_at: { type: DataTypes.DATE },
      last_error: { type: DataTypes.TEXT },
      delivered_at: { type: DataTypes.DATE },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE notifications ADD CONSTRAINT notifications_status_check CHECK (status IN ('pending', 'delivered', 'failed'))`,
    );
    await qi.addIndex('notifications', ['app_id', 'event_key'], {
      unique: true,
      name: 'notifications_app_event_key',
    });
    await qi.addIndex('notifications', ['app_id', 'created_at'], { name: 'notifications_app_created' });
    await qi.addIndex('notifications', ['app_id', 'trade_no'], { name: 'notifications_app_trade_no' });
    await qi.addIndex('notifications', ['app_id', 'refund_no'], { name: 'notifications_app_refund_no' });

    await qi.createTable('notification_attempts', {
      id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
      notification_id: {
        type: DataTypes.STRING(40),
        allowNull: false,
        references: { model: 'notifications', key: 'notification_id' },
        onDelete: 'CASCADE',
      },
      series: { type: DataTypes.INTEGER, allowNull: false },
      attempt: { type: DataTypes.INTEGER, allowNull: false },
      attempted_at: { type: DataTypes.DATE, allowNull: false },
      http_status: { type: DataTypes.INTEGER },
      latency_ms: { type: DataTypes.INTEGER, allowNull: false },
      error: { type: DataTypes.TEXT },
      response_excerpt: { type: DataTypes.TEXT },
    });
    // A retried delivery activity finds its attempt already recorded instead of adding another.
    await qi.addIndex('notification_attempts', ['notification_id', 'series', 'attempt'], {
      unique: true,
      name: 'notification_attempts_unique',
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('notification_attempts');
    await qi.dropTable('notifications');
  },
};
