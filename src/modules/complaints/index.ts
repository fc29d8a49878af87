// The complaints module's public surface (SPEC §16). Workflow code imports ./messages instead.
export { complaintRoutes } from './routes';
export { complaintOperations } from './openapi';
export { ComplaintService, type ComplaintServiceDeps } from './service';
export {
  createComplaintActivities,
  type ComplaintActivities,
  type ComplaintActivityDeps,
} from './activities';
export { ComplaintRepository, type ComplaintFilter } from './repository';
export { complaintsSealedWith, resealComplaints } from './sealed';
export { ensureComplaintSweepSchedule } from './schedule';
export { complaintView, type ComplaintView } from './view';
export { COMPLAINT_STATES, isOverdue } from './rules';
export type { Complaint } from './model';
export { refundComplaintSchema, replyComplaintSchema, listComplaintsQuery } from './schemas';
