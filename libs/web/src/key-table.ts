import { DEFAULT_ROTATION_OVERLAP, ROTATION_OVERLAPS } from '@app/contract';
import type { AdminKey } from './admin-api-types';

/** One row of the `key-table` partial. */
export interface KeyRow {
  id: string;
  hint: string;
  state: AdminKey['state'];
  active: boolean;
  /** Replaced by a rotation (it works on until its overlap ends, and cannot be rotated again). */
  rotated: boolean;
  createdAt: string;
  expiresAt: string | null;
  /** The rotate form's action (null: no Rotate for this key). */
  rotateAction: string | null;
  /** The revoke confirmation page (null: no Revoke for this key). */
  revokeHref: string | null;
}

/** The model of the `key-table` partial: the same table, rotate form and revoke link on both web apps. */
export interface KeyTable {
  rows: KeyRow[];
  /** Whether the Actions column shows (a token or an account that may change keys). */
  actions: boolean;
  overlaps: Array<{ value: string; label: string; selected: boolean }>;
}

/**
 * The keys of a consumer, newest first, with the actions each allows: an active key can be revoked, an active key
 * not yet rotated can be rotated. `keysPath` is where the app's key routes live (`/keys`, `/consumers/acme/keys`).
 */
export function keyTable(keys: readonly AdminKey[], keysPath: string, writable: boolean): KeyTable {
  // The admin API lists a consumer's keys oldest first; the pages show the newest first.
  const rows = [...keys].reverse().map((key): KeyRow => {
    const active = key.state === 'active';
    const rotated = key.replacedBy !== null;
    const id = encodeURIComponent(key.id);
    return {
      id: key.id,
      hint: key.hint,
      state: key.state,
      active,
      rotated,
      createdAt: key.createdAt,
      expiresAt: key.expiresAt,
      rotateAction: writable && active && !rotated ? `${keysPath}/${id}/rotate` : null,
      revokeHref: writable && active ? `${keysPath}/${id}/revoke` : null,
    };
  });
  return {
    rows,
    actions: writable,
    overlaps: ROTATION_OVERLAPS.map((o) => ({
      value: o.value,
      label: o.label,
      selected: o.value === DEFAULT_ROTATION_OVERLAP.value,
    })),
  };
}
