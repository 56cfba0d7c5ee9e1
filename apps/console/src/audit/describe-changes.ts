import { formatUtc } from '@app/web';
import type { AdminAuditEntry } from '@app/web';

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * JSON with a space after each comma and colon between items (`["consumers:read", "usage:read"]`, `{"amount": 5}`),
 * so that a table cell may wrap between a list's items instead of pushing its column off the page (issue #48.8).
 */
function readableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(readableJson).join(', ')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${readableJson(item)}`)
      .join(', ')}}`;
  return JSON.stringify(value) ?? String(value);
}

/** A changed value as the pages write it: an instant in the one date format of both apps, anything else as JSON. */
function show(value: unknown): string {
  return typeof value === 'string' && INSTANT.test(value) ? formatUtc(value) : readableJson(value);
}

/** Audit `changes` as one readable line: field: before → after. */
export function describeChanges(changes: AdminAuditEntry['changes']): string {
  if (!changes) return '';
  return Object.entries(changes)
    .map(([name, { before, after }]) => `${name}: ${show(before)} → ${show(after)}`)
    .join('; ');
}
