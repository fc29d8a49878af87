// The merchants module's public surface: what other modules and the API may use.
export { merchantRoutes, type MerchantRoutesDeps } from './routes';
export { merchantIdParameter, merchantOperations } from './openapi';
export {
  MerchantRepository,
  merchantsSealedWith,
  sealLegacyMerchantData,
  type MerchantRecord,
  type MerchantWithPersonalData,
} from './repository';
export { applicantOf } from './view';
export { DEFAULT_MAX_SHARING_RATIO } from './rules';
export { ChannelAccountRepository, NoSuchMerchantError, onboardedClaim } from './account-repository';
export { attachAccount } from './attach';
export { ACCOUNT_KINDS, attachSchema, claimOf, type ChannelAccount } from './accounts';
export { createMerchantActivities, type MerchantActivities } from './activities';
