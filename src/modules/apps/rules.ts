export const SCOPES = ['payments', 'merchants'] as const;
export type Scope = (typeof SCOPES)[number];
export const APP_STATUSES = ['active', 'disabled'] as const;
export type AppStatus = (typeof APP_STATUSES)[number];

export const APP_ID_PATTERN = /^app_[a-z2-7]{16}$/;

export function parseScopes(text: string): Scope[] {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = parts.filter((p) => !(SCOPES as readonly string[]).includes(p));
  if (unknown.length)
    throw new Error(`unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  if (parts.length === 0) throw new Error('at least one scope is needed');
  return [...new Set(parts)] as Scope[];
}
