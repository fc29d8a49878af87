import type Joi from 'joi';

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

/**
 * Joi's own pattern messages quote the value (`"bank_account" with value "6222…" fails to
 * match…`), and a refusal's message reaches clients' logs: these name the field and the format
 * only, whatever the field holds (a card number, a name, a secret). A schema's own messages win.
 */
const VALUE_FREE_MESSAGES = {
  'string.pattern.base': '{{#label}} is not in the required format',
  'string.pattern.name': '{{#label}} must be {{#name}}',
  'string.pattern.invert.base': '{{#label}} is in a format that is not allowed',
  'string.pattern.invert.name': '{{#label}} must not be {{#name}}',
};

/**
 * Validates strictly: U+0000 and `__proto__` refused first (hostileTextProblem), then the schema
 * with no type coercion and unknown keys refused. The first problem becomes the error `refuse`
 * makes of its message, which names the field (`"amount" must be greater than or equal to 1`)
 * and never quotes its value: each edge answers in its own vocabulary, the API with its
 * envelope, the sandbox as a channel.
 */
export function validateStrictly<T>(
  schema: Joi.Schema<T>,
  value: unknown,
  refuse: (message: string) => Error,
): T {
  const hostile = hostileTextProblem(value);
  if (hostile) throw refuse(hostile);
  const { value: out, error } = schema.validate(value, {
    convert: false,
    abortEarly: true,
    allowUnknown: false,
    messages: VALUE_FREE_MESSAGES,
    errors: { wrap: { label: '"' } },
  });
  if (error) throw refuse(error.message);
  return out;
}
