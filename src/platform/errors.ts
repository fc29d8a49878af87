/** The closed set of error codes a client can receive (SPEC §1). */
export const ERROR_STATUS = {
  invalid_param: 400,
  missing_param: 400,
  invalid_pay_method: 400,
  invalid_amount: 400,
  unauthorized: 401,
  app_not_found: 401,
  permission_denied: 403,
  not_found: 404,
  notification_not_found: 404,
  reconciliation_not_found: 404,
  link_not_found: 404,
  complaint_not_found: 404,
  contract_not_found: 404,
  order_not_found: 422,
  order_already_paid: 422,
  order_closed: 422,
  refund_amount_exceed: 422,
  sharing_amount_exceed: 422,
  order_not_paid: 422,
  sharing_not_config: 422,
  sharing_fee_exceed: 422,
  refund_not_found: 422,
  transfer_not_found: 422,
  complaint_processed: 422,
  contract_ended: 422,
  rate_limited: 429,
  channel_create_fail: 502,
  channel_refund_fail: 502,
  channel_transfer_fail: 502,
  channel_timeout: 502,
  channel_not_support: 502,
  channel_verify_fail: 502,
  internal_system: 500,
  database_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const INTERNAL_SYSTEM_MESSAGE = 'internal system error';

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}

/**
 * The one error type that reaches a client. Its message is shown as is, so it must never
 * carry a secret, SQL text or a stack trace.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly httpStatus: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Overrides the category status where SPEC maps a code differently (merchant not found → 404). */
    httpStatus?: number,
  ) {
    super(message);
    this.httpStatus = httpStatus ?? ERROR_STATUS[code];
  }
}
