import { errorEnvelope, type DocumentedErrorCode } from './response-schemas';

// The answers every operation shares: the error answers with their examples, and a JSON answer
// with the request id header.

type Schema = Record<string, unknown>;

/** A realistic message for each code, for the documented examples. */
const EXAMPLE_MESSAGES: Record<DocumentedErrorCode, string> = {
  invalid_param: '"amount" must be greater than or equal to 1',
  missing_param: 'trade_no is required',
  invalid_pay_method: 'pay_method card is not supported by channel sandbox',
  invalid_amount: "amount exceeds the channel's limit of 100000000",
  unauthorized: 'signature does not verify',
  app_not_found: 'app not found',
  permission_denied: 'the app lacks the payments scope',
  order_not_found: 'order not found',
  order_already_paid: 'order already paid',
  order_closed: 'order closed',
  refund_amount_exceed: 'refund amount exceeds the refundable amount',
  sharing_amount_exceed: 'profit_sharing_amount exceeds amount',
  order_not_paid: 'order not paid',
  sharing_not_config: 'profit sharing is not configured: the order needs a merchant with receivers',
  sharing_fee_exceed: 'profit_sharing_amount exceeds 30 (max_ratio 0.3 of amount)',
  refund_not_found: 'refund not found',
  transfer_not_found: 'transfer not found',
  channel_transfer_fail:
    'transfer T202611270531020000000042: the channel refused the transfer: the payee does not exist',
  channel_create_fail: 'the channel refused the order: ORDER_EXISTS',
  channel_refund_fail: 'the channel refused the refund: NOT_ENOUGH',
  channel_timeout: 'the channel did not answer within the request deadline',
  channel_not_support: 'channel paypal is not supported',
  channel_verify_fail: 'the channel answer does not verify',
  internal_system: 'internal system error',
  database_error: 'merchant_id already exists',
  rate_limited: 'rate limit exceeded: 100 requests per second',
  not_found: 'no route for GET /api/v1/pay/querry/P1',
  notification_not_found: 'notification not found',
  reconciliation_not_found: 'reconciliation run or mismatch not found',
  link_not_found: 'payment link not found',
  complaint_not_found: 'complaint not found',
  complaint_processed: 'the complaint is processed: it takes no reply',
  contract_not_found: 'contract not found',
  contract_ended: 'the contract has ended: there is nothing to cancel',
};

/** What every signed endpoint may answer besides its own codes (SPEC §2, §1). */
export const AUTH_ERRORS: Record<401 | 403 | 429, DocumentedErrorCode[]> = {
  401: ['unauthorized', 'app_not_found'],
  403: ['permission_denied'],
  429: ['rate_limited'],
};

export const STATUS_DESCRIPTIONS: Record<number, string> = {
  200: 'Success.',
  400: 'The request is malformed: a body that is not JSON, over 1 MiB or compressed, a field that fails validation (the message names it), a bad path value.',
  401: "The request's signature is missing or does not verify (`created` more than 300 s from the server's clock and a nonce used again within 10 minutes included), or its `keyid` names no app.",
  403: 'The app is disabled or lacks the scope.',
  404: 'Not found.',
  422: 'The request is well formed but the business state refuses it.',
  429: 'The app exceeded its request rate (100/s, burst 200 by default).',
  500: 'durapay failed; the message never carries a stack trace or SQL text.',
  502: 'The channel refused, is not supported, or did not answer within the request deadline (10 s).',
  503: 'Not ready.',
};

function errorExamples(codes: readonly DocumentedErrorCode[]): Schema {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: code,
        value: { code, message: EXAMPLE_MESSAGES[code], data: null, request_id: 'req_01JD4W6Y7Z' },
      },
    ]),
  );
}

export function jsonResponse(description: string, schema: Schema, examples?: Schema): Schema {
  return {
    description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: { 'application/json': { schema, ...(examples ? { examples } : {}) } },
  };
}

export function errorResponse(
  status: number,
  codes: readonly DocumentedErrorCode[],
  descriptions: Record<number, string> = STATUS_DESCRIPTIONS,
): Schema {
  return jsonResponse(
    `${descriptions[status] ?? ''} Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    errorEnvelope(codes),
    errorExamples(codes),
  );
}
