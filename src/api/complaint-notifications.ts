import type { Router } from 'express';
import type { ComplaintService } from '../modules/complaints';
import type { CallbackRateLimit } from './callback-replies';
import { channelNotificationRoutes } from './channel-notifications';
import type { ApiServices } from './services';

/** What a complaint notification may be at most (WeChat Pay's are well under 2 KiB). */
const NOTIFICATION_MAX_BYTES = 64 * 1024;

/**
 * SPEC §16: the channels' complaint notifications, `POST /api/v1/notify/complaint/{channel}`
 * (channel-notifications.ts). Verified and decrypted by the channel's complaints port, each is
 * handed to the complaint's workflow. The notification says only which complaint changed: its
 * workflow reads the rest from the channel, so a forged or replayed one changes nothing.
 */
export function complaintNotificationRoutes(
  services: ApiServices,
  complaints: ComplaintService,
  rateLimit?: CallbackRateLimit,
): Router {
  return channelNotificationRoutes(
    services,
    {
      kind: 'complaint',
      maxBytes: NOTIFICATION_MAX_BYTES,
      takes: (channelCode) => complaints.hasComplaints(channelCode),
      accept: async (channelCode, req) => {
        const taken = await complaints.acceptNotification(channelCode, req);
        if (!taken.verified) return taken;
        return {
          verified: true,
          eventId: taken.eventId,
          fields: { complaint_id: taken.complaintId, event_id: taken.eventId },
        };
      },
    },
    rateLimit,
  );
}
