// The callbacks module's public surface: the raw-callback log the callback route writes.
export { CallbackLog, type CallbackResult } from './repository';
