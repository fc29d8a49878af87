// The callbacks module's public surface: the raw-callback log the callback route writes, its
// retention's activities and schedule. Workflow code imports ./messages instead.
export { CallbackLog, type CallbackResult, type ReceivedCallback } from './repository';
export { createCallbackActivities, type CallbackActivities, type CallbackActivityDeps } from './activities';
export { ensureCallbackRetentionSchedule, type CallbackRetentionScheduleOptions } from './schedule';
export { callbackRetentionScheduleId, type CallbackRetentionInput } from './messages';
