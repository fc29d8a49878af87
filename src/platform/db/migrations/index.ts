import type { QueryInterface } from 'sequelize';
import type { RunnableMigration } from 'umzug';
import { diagnosticSteps } from './0001-diagnostic-steps';
import { apps } from './0002-apps';
import { notifications } from './0003-notifications';
import { payments } from './0004-payments';
import { sandbox } from './0005-sandbox';
import { merchants } from './0006-merchants';
import { openApplications } from './0007-open-applications';
import { sandboxRequestCounts } from './0008-sandbox-request-counts';
import { orderSubMerchant } from './0009-order-sub-merchant';
import { paymentPolls } from './0010-payment-polls';
import { payloadKeys } from './0011-payload-keys';
import { sealedApplicantData } from './0012-sealed-applicant-data';
import { refundsAndSharing } from './0013-refunds-and-sharing';
import { callbackRetention } from './0014-callback-retention';
import { orderSavedStates } from './0015-order-saved-states';
import { savedStateVersions } from './0016-saved-state-versions';
import { channelAccounts } from './0017-channel-accounts';
import { reconciliation } from './0018-reconciliation';
import { transfers } from './0019-transfers';
import { consoleOperators } from './0020-console';
import { consoleIndexes } from './0021-console-indexes';
import { barcodeOrders } from './0022-barcode-orders';
import { checkout } from './0023-checkout';
import { checkoutOrders } from './0024-checkout-orders';
import { complaints } from './0025-complaints';
import { complaintEvents } from './0026-complaint-events';
import { contracts } from './0027-contracts';

export type Migration = RunnableMigration<QueryInterface>;

/**
 * Every migration, in order. Listed here rather than found by a glob so that the same list
 * works from the TypeScript sources, the compiled build and a bundled image.
 */
export const migrations: Migration[] = [
  diagnosticSteps,
  apps,
  notifications,
  payments,
  sandbox,
  merchants,
  openApplications,
  sandboxRequestCounts,
  orderSubMerchant,
  paymentPolls,
  payloadKeys,
  sealedApplicantData,
  refundsAndSharing,
  callbackRetention,
  orderSavedStates,
  savedStateVersions,
  channelAccounts,
  reconciliation,
  transfers,
  consoleOperators,
  consoleIndexes,
  barcodeOrders,
  checkout,
  checkoutOrders,
  complaints,
  complaintEvents,
  contracts,
];
