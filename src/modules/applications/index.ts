// The applications module's public surface. Workflow code imports ./messages instead.
export { applicationRoutes } from './routes';
export { applicationOperations } from './openapi';
export { ApplicationService, type ApplicationServiceDeps } from './service';
export {
  createApplicationActivities,
  type ApplicationActivities,
  type ApplicationActivityDeps,
} from './activities';
export {
  ApplicationRepository,
  applicationsSealedWith,
  sealLegacyApplicationData,
  type ApplicationRow,
} from './repository';
export { applicationView } from './view';
