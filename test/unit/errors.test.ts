import { AppError, ERROR_STATUS, isErrorCode } from '../../src/platform/errors';

describe('error codes', () => {
  test('when a code belongs to a seed category, then it maps to that category status', () => {
    const byStatus = (status: number) =>
      Object.entries(ERROR_STATUS)
        .filter(([, s]) => s === status)
        .map(([c]) => c)
        .sort();
    expect(byStatus(400)).toEqual(['invalid_amount', 'invalid_param', 'invalid_pay_method', 'missing_param']);
    expect(byStatus(401)).toEqual(['app_not_found', 'unauthorized']);
    expect(byStatus(403)).toEqual(['permission_denied']);
    expect(byStatus(422)).toEqual(
      [
        'complaint_processed',
        'contract_ended',
        'order_already_paid',
        'order_closed',
        'order_not_found',
        'order_not_paid',
        'refund_amount_exceed',
        'refund_not_found',
        'sharing_amount_exceed',
        'sharing_fee_exceed',
        'sharing_not_config',
        'transfer_not_found',
      ].sort(),
    );
    expect(byStatus(502)).toEqual(
      [
        'channel_create_fail',
        'channel_not_support',
        'channel_refund_fail',
        'channel_timeout',
        'channel_transfer_fail',
        'channel_verify_fail',
      ].sort(),
    );
    expect(byStatus(500)).toEqual(['database_error', 'internal_system']);
    expect(byStatus(404)).toEqual([
      'complaint_not_found',
      'contract_not_found',
      'link_not_found',
      'not_found',
      'notification_not_found',
      'reconciliation_not_found',
    ]);
    expect(byStatus(429)).toEqual(['rate_limited']);
  });

  test('when an AppError is built, then its status follows the table unless overridden', () => {
    expect(new AppError('order_closed', 'order closed').httpStatus).toBe(422);
    expect(new AppError('order_not_found', 'merchant not found', 404).httpStatus).toBe(404);
  });

  test('when a value is not a known code, then isErrorCode rejects it', () => {
    expect(isErrorCode('order_closed')).toBe(true);
    expect(isErrorCode('ORDER_CLOSED')).toBe(false);
    expect(isErrorCode('toString')).toBe(false);
  });
});
