import type { Response } from 'express';
import { type AppError } from '../errors';

export function sendData(res: Response, data: unknown): void {
  // For the request's trace span (platform/tracing.ts): the trade or refund number it answered.
  res.locals.data = data;
  res
    .status(200)
    .json({ code: 'success', message: 'success', data: data ?? null, request_id: res.locals.requestId });
}

export function sendError(res: Response, err: AppError): void {
  // For the metrics (platform/metrics.ts), which count refusals by code.
  res.locals.errorCode = err.code;
  res
    .status(err.httpStatus)
    .json({ code: err.code, message: err.message, data: null, request_id: res.locals.requestId });
}
