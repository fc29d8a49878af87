import Joi from 'joi';
import { AppError } from '../domain/errors';

/** SPEC §1: free-form objects (`extra`, `submit_data`) nest at most this many levels. */
export const FREE_FORM_MAX_DEPTH = 16;

/**
 * What is wrong with a value from a client before any schema reads it, or undefined: a text
 * (value or key) holding U+0000, which Postgres cannot store and no field of the contract
 * allows, or a key named `__proto__`, which JSON.parse keeps as an own property that a later
 * spread or assignment would turn into a prototype. Walks without recursion, so a body nested
 * thousands of levels deep cannot overflow the stack here.
 */
export function hostileTextProblem(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return `"${path || 'value'}" must not contain U+0000`;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: `${path}[${i}]` }));
    } else if (typeof v === 'object' && v !== null) {
      for (const key of Object.keys(v)) {
        const child = path ? `${path}.${key}` : key;
        if (key === '__proto__') return `"${child}" is not allowed`;
        if (key.includes('\u0000'))
          return `"${child.replaceAll('\u0000', '\\u0000')}" must not contain U+0000`;
        stack.push({ value: (v as Record<string, unknown>)[key], path: child });
      }
    }
  }
  return undefined;
}

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
  const hostile = hostileTextProblem(value);
  if (hostile) throw new AppError('invalid_param', hostile);
  const { value: out, error } = schema.validate(value, {
    convert: false,
    abortEarly: true,
    allowUnknown: false,
    errors: { wrap: { label: '"' } },
  });
  if (error) throw new AppError('invalid_param', error.message);
  return out;
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
