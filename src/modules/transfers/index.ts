// The transfers module's public surface: what other modules and the API may use. Workflow code
// imports the workflow-safe ./messages and ./rules instead.
export { transferRoutes } from './routes';
export { transferOperations } from './openapi';
export { TransferService, type TransferServiceDeps } from './service';
export {
  TransferRepository,
  resealTransferPayees,
  transferPayeesSealedWith,
  type Transfer,
  type TransferSearch,
} from './repository';
export { createTransferActivities, type TransferActivities, type TransferActivityDeps } from './activities';
export { transferView } from './view';
export { TRANSFER_STATUSES, type TransferStatus } from './rules';
