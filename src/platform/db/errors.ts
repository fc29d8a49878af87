/**
 * Which database failures can never succeed when tried again. A write refused by a constraint, a
 * check or a type (SQLSTATE class 22 data exception, 23 integrity constraint violation, 42
 * syntax error or access rule) gives the same answer on every retry: retrying it for ever would
 * wedge the workflow that asked for it. Anything else (a lost connection, a timeout, a
 * serialization failure, a server shutting down) may pass on a later try.
 */

const PERMANENT_SQLSTATE_CLASSES = new Set(['22', '23', '42']);

/** The SQLSTATE of a pg error, wherever Sequelize put it (the error itself, `parent`, `original`). */
export function sqlStateOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, parent, original } = e as { code?: unknown; parent?: unknown; original?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = parent ?? original;
  }
  return undefined;
}

export function isPermanentDatabaseError(err: unknown): boolean {
  const state = sqlStateOf(err);
  return state !== undefined && PERMANENT_SQLSTATE_CLASSES.has(state.slice(0, 2));
}

/** The constraint a refused write named (pg's `constraint`), when it named one. */
export function violatedConstraint(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { constraint, parent, original } = e as {
      constraint?: unknown;
      parent?: unknown;
      original?: unknown;
    };
    if (typeof constraint === 'string') return constraint;
    e = parent ?? original;
  }
  return undefined;
}
