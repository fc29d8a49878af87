/**
 * Reading a gateway request: its parameters from the query string and the body (a form, the
 * app's order string, or multipart with files), biz_content as JSON, and a schema check whose
 * failure names the field the way the gateway does (isv.missing-parameter, isv.invalid-parameter).
 */
import type { Request } from 'express';
import type Joi from 'joi';
import { hostileTextProblem } from '../../src/platform/http/strict';
import { invalidArgument, type Params } from './wire';

export interface GatewayRequest {
  params: Params;
  /** Multipart file parts by field name (image uploads); never signed. */
  files: Map<string, File>;
  /** A parameter sent twice with different values, which no signature can cover. */
  conflict?: string;
}

function add(into: GatewayRequest, key: string, value: string): void {
  const had = Object.hasOwn(into.params, key) ? into.params[key] : undefined;
  if (had !== undefined && had !== value) into.conflict ??= key;
  into.params[key] = value;
}

const isForm = (type: string) => /^application\/x-www-form-urlencoded\b/i.test(type);
const isText = (type: string) => /^text\/plain\b/i.test(type);
const isMultipart = (type: string) => /^multipart\/form-data\b/i.test(type);

/**
 * Every parameter of a request, the query's and the body's: the SDK puts the common ones in the
 * query string and the rest in the body. A name given in both places must agree.
 */
export async function readGatewayRequest(req: Request, bodyAsForm = false): Promise<GatewayRequest> {
  const out: GatewayRequest = { params: Object.create(null) as Params, files: new Map() };
  const search = new URL(req.originalUrl, 'http://gateway.invalid').searchParams;
  for (const [key, value] of search) add(out, key, value);
  const raw = req.rawBody ?? Buffer.alloc(0);
  if (raw.length === 0) return out;
  const type = req.get('Content-Type') ?? '';
  if (isForm(type) || (bodyAsForm && (isText(type) || type === ''))) {
    for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) add(out, key, value);
    return out;
  }
  if (isMultipart(type)) {
    let form: FormData;
    try {
      form = await new Response(raw, { headers: { 'Content-Type': type } }).formData();
    } catch {
      throw invalidArgument('isv.invalid-parameter', 'the body is not multipart/form-data with a boundary');
    }
    for (const [key, value] of form) {
      if (typeof value === 'string') add(out, key, value);
      else out.files.set(key, value);
    }
    return out;
  }
  throw invalidArgument(
    'isv.invalid-parameter',
    `a ${type || 'typeless'} body is not read here: parameters travel as application/x-www-form-urlencoded (multipart/form-data with files)`,
  );
}

/** biz_content as a JSON object, or why not. */
export function parseBizContent(params: Params): Record<string, unknown> {
  const text = params.biz_content;
  if (text === undefined || text === '') {
    throw invalidArgument('isv.missing-parameter', '缺少必选参数 biz_content');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument('isv.invalid-parameter', 'biz_content is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument('isv.invalid-parameter', 'biz_content is not a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * `value` checked against `schema` without conversion: a missing required field is
 * isv.missing-parameter, anything else wrong isv.invalid-parameter, each naming the field. Fields
 * the schema does not name pass, as at Alipay, unless the schema says otherwise.
 */
export function validateBiz<T>(schema: Joi.Schema<T>, value: unknown): T {
  const hostile = hostileTextProblem(value);
  if (hostile) throw invalidArgument('isv.invalid-parameter', hostile);
  const { value: out, error } = schema.validate(value, {
    convert: false,
    abortEarly: true,
    allowUnknown: true,
    errors: { wrap: { label: '' } },
  });
  if (error) {
    const detail = error.details[0]!;
    const field = detail.path.join('.') || 'biz_content';
    if (detail.type === 'any.required') {
      throw invalidArgument('isv.missing-parameter', `缺少必选参数 ${field}`);
    }
    throw invalidArgument('isv.invalid-parameter', `参数无效 ${field}: ${detail.message}`);
  }
  return out;
}

/** A page's form post or a script's JSON, and whether it came from the page (answered by a redirect). */
export function pageOrScriptBody(req: Request): { body: unknown; fromPage: boolean } {
  const raw = (req.rawBody ?? Buffer.alloc(0)).toString('utf8');
  const type = req.get('Content-Type') ?? '';
  if (isForm(type)) {
    return {
      body: Object.fromEntries(new URLSearchParams(raw)),
      fromPage: req.accepts(['json', 'html']) === 'html',
    };
  }
  try {
    return { body: JSON.parse(raw) as unknown, fromPage: false };
  } catch {
    return { body: undefined, fromPage: false };
  }
}
