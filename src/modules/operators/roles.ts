/** What an operator may do (SPEC §12): a viewer reads, an operator acts, an admin also manages. */
export const OPERATOR_ROLES = ['viewer', 'operator', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

const RANK: Record<OperatorRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether `role` may do what `needed` may. */
export function roleAllows(role: OperatorRole, needed: OperatorRole): boolean {
  return RANK[role] >= RANK[needed];
}
