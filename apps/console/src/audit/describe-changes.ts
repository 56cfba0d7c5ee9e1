import { formatUtc } from '@app/web';
import type { AdminAuditEntry } from '@app/web';

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** A changed value as the pages write it: an instant in the one date format of both apps, anything else as JSON. */
function show(value: unknown): string {
  return typeof value === 'string' && INSTANT.test(value) ? formatUtc(value) : JSON.stringify(value);
}

/** Audit `changes` as one readable line: field: before → after. */
export function describeChanges(changes: AdminAuditEntry['changes']): string {
  if (!changes) return '';
  return Object.entries(changes)
    .map(([name, { before, after }]) => `${name}: ${show(before)} → ${show(after)}`)
    .join('; ');
}
