// The apps module's public surface: apps, their credentials, and request authentication.
export { authenticate, type AuthDeps, NONCE_TTL_SECONDS, SIGNATURE_WINDOW_SECONDS } from './authenticate';
export {
  AppRepository,
  NonceStore,
  RequestAdmission,
  type AppCredentials,
  type AppRecord,
} from './repository';
export { AppCache, APP_CHANGES_CHANNEL, listenForAppChanges, type AppSource } from './cache';
export { APP_ID_PATTERN, APP_STATUSES, parseScopes, SCOPES, type AppStatus, type Scope } from './rules';
