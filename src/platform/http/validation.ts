import Joi from 'joi';
import { AppError } from '../errors';
import { validateStrictly } from './strict';

/** SPEC §1: free-form objects (`extra`, `submit_data`) nest at most this many levels. */
export const FREE_FORM_MAX_DEPTH = 16;

/** How many levels of objects and arrays `value` has (`{}` is 1), counting no further than `limit + 1`. */
function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v))
      stack.push({ value: child, depth: depth + 1 });
  }
  return deepest;
}

/**
 * A free-form object of SPEC §1 (`extra`, `submit_data`): any keys, at most 16 levels deep and
 * `maxBytes` of UTF-8 JSON. Bounded here, at the edge, because the object travels on into
 * workflow payloads, channel requests and JSONB columns, none of which should meet it unbounded.
 */
export function freeFormObject(maxBytes: number): Joi.ObjectSchema {
  return Joi.object()
    .unknown(true)
    .custom((value: unknown, helpers) => {
      if (nestingDepth(value, FREE_FORM_MAX_DEPTH) > FREE_FORM_MAX_DEPTH) {
        return helpers.message({
          custom: `{{#label}} must nest at most ${FREE_FORM_MAX_DEPTH} levels of objects and arrays`,
        });
      }
      if (Buffer.byteLength(JSON.stringify(value), 'utf8') > maxBytes) {
        return helpers.message({
          custom: `{{#label}} must be at most ${maxBytes / 1024} KiB as JSON`,
        });
      }
      return value;
    });
}

/**
 * A list parameter read leniently (SPEC §5.3): a text, or the same key repeated (which Express
 * reads as an array, and `parsePage` then as "not an integer", 0).
 */
export const lenientQueryValue = Joi.alternatives(
  Joi.string().allow(''),
  Joi.array().items(Joi.string().allow('')),
);

/**
 * Validates strictly (no type coercion, unknown keys refused) and turns the first problem
 * into `400 invalid_param` whose message names the field, e.g. `"amount" must be ≥ 1`.
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  return validateStrictly(schema, value, (message) => new AppError('invalid_param', message));
}

/**
 * A value taken from the path (Express has already percent-decoded it; one that does not
 * decode is refused by the error handler). U+0000 is refused as in any other text.
 */
export function pathValue(params: Record<string, unknown>, name: string, label: string): string {
  const value = params[name] === undefined ? '' : String(params[name]);
  if (value.includes('\u0000')) throw new AppError('invalid_param', `"${label}" must not contain U+0000`);
  return value;
}
