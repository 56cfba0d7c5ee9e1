import type { AdminAuditEntry } from '@app/web';

/** Audit `changes` as one readable line: field: before → after. */
export function describeChanges(changes: AdminAuditEntry['changes']): string {
  if (!changes) return '';
  return Object.entries(changes)
    .map(([name, { before, after }]) => `${name}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`)
    .join('; ');
}
