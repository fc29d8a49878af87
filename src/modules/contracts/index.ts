// The contracts module's public surface (SPEC §17). Workflow code imports ./messages and ./rules.
export { contractRoutes } from './routes';
export { contractOperations } from './openapi';
export { ContractService, type ContractServiceDeps, type CreateContractBody } from './service';
export {
  createContractActivities,
  type ContractActivities,
  type ContractActivityDeps,
  type DeductionOutcome,
} from './activities';
export { ContractRepository, type Contract, type Deduction } from './repository';
export { contractView, type ContractView } from './view';
export { CONTRACT_STATUSES, type ContractClock, type ContractStatus } from './rules';
export { contractWorkflowId } from './messages';
