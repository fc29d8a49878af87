import type { Router } from 'express';
import type { ContractService } from '../modules/contracts';
import type { CallbackRateLimit } from './callback-replies';
import { channelNotificationRoutes } from './channel-notifications';
import type { ApiServices } from './services';

/** What a contract notification may be at most. */
const NOTIFICATION_MAX_BYTES = 64 * 1024;

/**
 * SPEC §17: the channels' contract notifications (the buyer signed; the contract ended at the
 * channel), `POST /api/v1/notify/contract/{channel}` (channel-notifications.ts), verified by the
 * channel's contracts port and handed to the contract's workflow as a signal; answered as the
 * channel's contracts port says.
 */
export function contractNotificationRoutes(
  services: ApiServices,
  contracts: ContractService,
  rateLimit?: CallbackRateLimit,
): Router {
  return channelNotificationRoutes(
    services,
    {
      kind: 'contract',
      maxBytes: NOTIFICATION_MAX_BYTES,
      takes: (channelCode) => contracts.hasContracts(channelCode),
      accept: async (channelCode, req) => {
        const taken = await contracts.acceptNotification(channelCode, req);
        if (!taken.verified) return taken;
        return { verified: true, fields: { contract_no: taken.contractNo, event: taken.kind } };
      },
      replyTaken: (channelCode) => services.channels.get(channelCode)?.contracts?.reply({ ok: true }),
    },
    rateLimit,
  );
}
