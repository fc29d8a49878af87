import { isoOrNull } from '../../platform/dates';
import type { ApplicationRow } from './repository';

/** The application as GET /api/v1/merchant/{id}/audit shows it (SPEC §5.7). */
export function applicationView(a: ApplicationRow) {
  return {
    application_id: a.application_id,
    merchant_id: a.merchant_id,
    channel_code: a.channel_code,
    status: a.status,
    channel_application_no: a.channel_application_no,
    sub_merchant_no: a.sub_merchant_no,
    sign_url: a.sign_url,
    reject_reason: a.reject_reason,
    audit_detail: a.audit_detail,
    submitted_at: isoOrNull(a.submitted_at),
    updated_at: isoOrNull(a.updated_at),
    finished_at: isoOrNull(a.finished_at),
  };
}
