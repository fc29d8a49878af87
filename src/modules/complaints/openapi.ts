// The complaint operations of the OpenAPI document, beside the routes that serve them (SPEC §16).
import { type ApiOperation } from '../../platform/http/openapi';
import { listComplaintsQuery, refundComplaintSchema, replyComplaintSchema } from './schemas';

const complaintId = {
  name: 'complaintId',
  description: "The channel's `complaint_id`.",
  example: '200201820261203123456789012',
};

export const complaintOperations: ApiOperation[] = [
  {
    method: 'get',
    path: '/api/v1/complaints',
    operationId: 'listComplaints',
    tag: 'Complaints',
    summary: "List the complaints about the app's orders",
    description:
      "Newest first, by keyset: pass a page's `next` as `after` for the next. Only complaints naming one of the app's orders are listed.",
    scope: 'payments',
    query: listComplaintsQuery,
    data: 'ComplaintPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/api/v1/complaints/{complaintId}',
    operationId: 'getComplaint',
    tag: 'Complaints',
    summary: 'Read a complaint',
    description:
      "The complaint as the channel last told durapay, with its negotiation and deadlines. An unknown complaint, or another app's, answers `404 complaint_not_found`.",
    scope: 'payments',
    pathParameters: [complaintId],
    data: 'Complaint',
    errors: { 400: ['invalid_param'], 404: ['complaint_not_found'] },
  },
  {
    method: 'post',
    path: '/api/v1/complaints/{complaintId}/reply',
    operationId: 'replyToComplaint',
    tag: 'Complaints',
    summary: 'Reply to the payer',
    description:
      "Sends the reply (and its images, uploaded through the channel's image API first) to the channel; the first reply takes the complaint to `processing`. The same content and images again is the same reply: answered without sending it again. A processed complaint: `422 complaint_processed`.",
    scope: 'payments',
    pathParameters: [complaintId],
    body: { name: 'ComplaintReply', schema: replyComplaintSchema, required: true },
    data: 'Complaint',
    errors: {
      400: ['invalid_param'],
      404: ['complaint_not_found'],
      422: ['complaint_processed'],
      502: ['channel_timeout', 'channel_not_support'],
    },
  },
  {
    method: 'post',
    path: '/api/v1/complaints/{complaintId}/refund',
    operationId: 'refundComplaint',
    tag: 'Complaints',
    summary: 'Refund the complained order',
    description:
      "An ordinary refund of the order (`POST /api/v1/pay/refund`'s path and book): it counts against what the order can refund, is notified as `refund.*`, and a refusal is the book's (`422 refund_amount_exceed`, …). A complaint is refunded once: the same amount again answers the same refund, another amount is `400 invalid_param`.",
    scope: 'payments',
    pathParameters: [complaintId],
    body: { name: 'ComplaintRefund', schema: refundComplaintSchema, required: true },
    data: 'ComplaintRefunded',
    errors: {
      400: ['invalid_param'],
      404: ['complaint_not_found'],
      422: ['order_not_found', 'order_not_paid', 'order_closed', 'refund_amount_exceed'],
      502: ['channel_refund_fail', 'channel_timeout', 'channel_not_support'],
    },
  },
  {
    method: 'post',
    path: '/api/v1/complaints/{complaintId}/complete',
    operationId: 'completeComplaint',
    tag: 'Complaints',
    summary: 'Tell the channel the complaint is dealt with',
    description:
      'The complaint becomes `processed` at the channel. Completing a processed complaint answers it as it is, without asking the channel again.',
    scope: 'payments',
    pathParameters: [complaintId],
    data: 'Complaint',
    errors: {
      400: ['invalid_param'],
      404: ['complaint_not_found'],
      502: ['channel_timeout', 'channel_not_support'],
    },
  },
];
