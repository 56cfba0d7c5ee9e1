import type { AdminKey } from './admin-api-types';
import { keyTable } from './key-table';

const key = (id: string, extra: Partial<AdminKey> = {}): AdminKey => ({
  id,
  hint: `petk_${id}…`,
  state: 'active',
  createdAt: '2026-11-27T10:00:00.000Z',
  expiresAt: null,
  revokedAt: null,
  replacedBy: null,
  allowedAddresses: null,
  ...extra,
});

describe('keyTable (the key-table partial of both apps)', () => {
  const keys = [
    key('old', { replacedBy: 'new', expiresAt: '2026-11-28T10:00:00.000Z' }),
    key('gone', { state: 'revoked', revokedAt: '2026-11-27T11:00:00.000Z' }),
    key('new'),
  ];

  it('lists the newest first; rotate only an active key not yet rotated, revoke any active key', () => {
    const table = keyTable(keys, '/consumers/a%20b/keys', true);
    expect(table.rows.map((r) => [r.id, r.rotateAction, r.revokeHref])).toEqual([
      ['new', '/consumers/a%20b/keys/new/rotate', '/consumers/a%20b/keys/new/revoke'],
      ['gone', null, null],
      ['old', null, '/consumers/a%20b/keys/old/revoke'],
    ]);
    expect(table.rows.find((r) => r.id === 'old')?.rotated).toBe(true);
    expect(table.overlaps.filter((o) => o.selected).map((o) => o.label)).toEqual(['24 hours']);
  });

  it('offers no action at all to a reader', () => {
    const table = keyTable(keys, '/keys', false);
    expect(table.actions).toBe(false);
    expect(table.rows.every((r) => r.rotateAction === null && r.revokeHref === null)).toBe(true);
  });
});
