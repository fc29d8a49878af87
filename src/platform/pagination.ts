export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/**
 * The list parameters of SPEC §5.3 (seed §4.3): absent → default; not an integer → 0;
 * negative → 0; a limit above 100 → 100. Never an error.
 */
export function parsePage(query: { limit?: unknown; offset?: unknown }): { limit: number; offset: number } {
  return {
    limit: Math.min(MAX_LIMIT, readInt(query.limit, DEFAULT_LIMIT)),
    offset: readInt(query.offset, 0),
  };
}

function readInt(value: unknown, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string' || !/^[+-]?\d+$/.test(value.trim())) return 0;
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n) || n < 0) return 0;
  return n;
}
