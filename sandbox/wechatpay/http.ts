/**
 * The WeChat Pay sandbox's request reading: a JSON body from its exact bytes, a query parameter,
 * a schema check whose failure is v3's PARAM_ERROR, shared by the router and its applyment part;
 * and the partner fields every payment names, checked against who signed the request.
 */
import type { Request, Response } from 'express';
import type Joi from 'joi';
import { validateStrictly } from '../../src/platform/http/strict';
import { WechatpayError } from './wire';

export function paramError(message: string): WechatpayError {
  return new WechatpayError(400, 'PARAM_ERROR', message);
}

export function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  return validateStrictly(schema, value, paramError);
}

export function jsonBody(req: Request): unknown {
  const raw = req.rawBody ?? Buffer.alloc(0);
  if (raw.length === 0) throw paramError('the request body is empty; a JSON object is expected');
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw paramError('the request body is not valid JSON');
  }
}

/** A required query parameter, once. */
export function queryParam(req: Request, name: string): string {
  const value = (req.query as Record<string, unknown>)[name];
  if (typeof value !== 'string' || value === '')
    throw paramError(`query parameter ${name} is required, once`);
  return value;
}

export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** A page's form post or a script's JSON, and whether it came from the page (answered by a redirect). */
export function pageOrScriptBody(req: Request): { body: unknown; fromPage: boolean } {
  const form = typeof req.is('application/x-www-form-urlencoded') === 'string';
  const body = form
    ? Object.fromEntries(new URLSearchParams((req.rawBody ?? Buffer.alloc(0)).toString('utf8')))
    : jsonBody(req);
  return { body, fromPage: form && req.accepts(['json', 'html']) === 'html' };
}

/**
 * A partner payment's sp_mchid must be the mchid that signed the request (the router's check
 * leaves it in `res.locals.mchid`), and its sp_appid, when it names one, the app bound to it.
 */
export function requirePartner(
  res: Response,
  body: { sp_mchid: string; sp_appid?: string },
  spAppid: string,
): void {
  if (body.sp_mchid !== res.locals.mchid) {
    throw new WechatpayError(
      400,
      'INVALID_REQUEST',
      `sp_mchid ${body.sp_mchid} is not the mchid that signed the request`,
    );
  }
  if (body.sp_appid !== undefined && body.sp_appid !== spAppid) {
    throw new WechatpayError(
      400,
      'APPID_MCHID_NOT_MATCH',
      `sp_appid ${body.sp_appid} is not bound to sp_mchid ${body.sp_mchid}`,
    );
  }
}
