// The onboarding operations of the OpenAPI document, beside the routes that serve them.
import { type ApiOperation } from '../../platform/http/openapi';
import { merchantIdParameter } from '../merchants';
import { applySchema } from './schemas';

export const applicationOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/merchant/{merchantID}/apply',
    operationId: 'applyForMerchant',
    tag: 'Merchants',
    summary: 'Apply for onboarding at a channel',
    description:
      "Starts an onboarding application at the channel, followed by polling until it is final; each change is posted to `notify_url`. While the merchant's application at this channel is not final, applying again returns its `application_id` and submits nothing.",
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    body: { name: 'ApplyRequest', schema: applySchema, required: true },
    data: 'CreatedApplication',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'], 500: ['internal_system'] },
  },
  {
    method: 'get',
    path: '/api/v1/merchant/{merchantID}/audit',
    operationId: 'getMerchantAudit',
    tag: 'Merchants',
    summary: "Read the merchant's latest application",
    description:
      'The latest application and its audit state. A merchant without an application is `404 order_not_found`, "application not found".',
    scope: 'merchants',
    pathParameters: [merchantIdParameter],
    data: 'Application',
    errors: { 400: ['invalid_param'], 404: ['order_not_found'] },
  },
];
