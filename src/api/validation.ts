import type Joi from 'joi';
import { AppError } from '../domain/errors';

/**
 * Validates strictly (no type coercion, unknown keys refused) and turns the first problem
 * into `400 invalid_param` whose message names the field, e.g. `"amount" must be ≥ 1`.
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  const { value: out, error } = schema.validate(value, {
    convert: false,
    abortEarly: true,
    allowUnknown: false,
    errors: { wrap: { label: '"' } },
  });
  if (error) throw new AppError('invalid_param', error.message);
  return out;
}
