// The operators module's public surface: the console's accounts, sign-in, sessions and audit log.
export {
  OperatorService,
  auditView,
  csrfTokenMatches,
  operatorView,
  tokenHash,
  type Actor,
  type ActiveSession,
  type OperatorServiceDeps,
  type SignedIn,
} from './service';
export { OperatorRepository, type Operator, type AuditRow, type AuditFilter } from './repository';
export { OPERATOR_ROLES, roleAllows, type OperatorRole } from './roles';
export { isOperatorRole, passwordProblem, usernameProblem } from './rules';
export { totpCode } from './totp';
