import type { ApplicationServiceDeps } from '../modules/applications';
import type { MerchantRoutesDeps } from '../modules/merchants';
import type { NotificationRoutesDeps } from '../modules/notifications';
import type { OrderServiceDeps } from '../modules/orders';
import type { ContractServiceDeps } from '../modules/contracts';
import type { Keyring } from '../platform/crypto/keyring';

/**
 * What the API hands the modules it mounts: each module says what it needs, and the API's
 * composition (src/api/server.ts, the tests' harness) provides all of it at once.
 */
export type ApiServices = OrderServiceDeps &
  ApplicationServiceDeps &
  MerchantRoutesDeps &
  NotificationRoutesDeps &
  Pick<ContractServiceDeps, 'contractClock'> & {
    /** The keys that seal Temporal payloads and applicant data at rest (SPEC §7). */
    payloadKeys: Keyring;
  };
