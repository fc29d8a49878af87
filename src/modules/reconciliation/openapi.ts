// The reconciliation operations of the OpenAPI document (SPEC §10), beside the routes.
import { type ApiOperation } from '../../platform/http/openapi';
import { listMismatchesQuery, listRunsQuery, resolveMismatchBody, startRunBody } from './schemas';

export const reconciliationOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/v1/reconciliation/runs',
    operationId: 'startReconciliationRuns',
    tag: 'Reconciliation',
    summary: "Start a day's reconciliation by hand",
    description:
      "Starts a run for each of the app's accounts at the channel that took orders on the day (or the one named). A run already going goes on; a finished one runs again and replaces its findings. The runs are answered as recorded; follow them with the list.",
    scope: 'payments',
    body: { name: 'StartReconciliationRequest', schema: startRunBody, required: true },
    data: 'ReconciliationRunList',
    errors: { 400: ['invalid_param'], 502: ['channel_not_support'] },
  },
  {
    method: 'get',
    path: '/api/v1/reconciliation/runs',
    operationId: 'listReconciliationRuns',
    tag: 'Reconciliation',
    summary: 'List reconciliation runs',
    description: "Runs of the accounts with the app's orders, newest day first, with their summaries.",
    scope: 'payments',
    query: listRunsQuery,
    data: 'ReconciliationRunPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'get',
    path: '/api/v1/reconciliation/runs/{runId}/mismatches',
    operationId: 'listReconciliationMismatches',
    tag: 'Reconciliation',
    summary: "A run's findings about the app's orders",
    description:
      "Each with both sides' rows as each recorded them; findings about no order of the app are not shown.",
    scope: 'payments',
    pathParameters: [
      { name: 'runId', description: 'The `run_id`.', example: 'wechatpay:1900000109:2026-11-26' },
    ],
    query: listMismatchesQuery,
    data: 'ReconciliationMismatchPage',
    errors: { 400: ['invalid_param'], 404: ['reconciliation_not_found'] },
  },
  {
    method: 'post',
    path: '/api/v1/reconciliation/mismatches/{mismatchId}/resolve',
    operationId: 'resolveReconciliationMismatch',
    tag: 'Reconciliation',
    summary: "Record a person's resolution of a finding",
    description: 'Records who decided what and why; it never moves money (a refund is a refund request).',
    scope: 'payments',
    pathParameters: [{ name: 'mismatchId', description: 'The `mismatch_id`.', example: '42' }],
    body: { name: 'ResolveMismatchRequest', schema: resolveMismatchBody, required: true },
    data: 'ReconciliationMismatch',
    errors: { 400: ['invalid_param'], 404: ['reconciliation_not_found'] },
  },
];
