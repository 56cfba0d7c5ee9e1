/**
 * How long the old key keeps working after a rotation: the choices both web apps offer, in one wording. The admin
 * API accepts any overlap from 0 to 7 days (its RotateKeyDto); these are the ones a page offers.
 */
export const ROTATION_OVERLAPS = [
  { value: 'none', seconds: 0, label: 'None: the old key stops now' },
  { value: '1h', seconds: 3_600, label: '1 hour' },
  { value: '24h', seconds: 86_400, label: '24 hours' },
  { value: '7d', seconds: 604_800, label: '7 days' },
] as const;

export type RotationOverlap = (typeof ROTATION_OVERLAPS)[number];

/** The overlap a rotate form has selected at first. */
export const DEFAULT_ROTATION_OVERLAP: RotationOverlap = ROTATION_OVERLAPS[2];

/** The overlap a form sent (its `value`), or undefined for anything else. */
export function rotationOverlap(value: unknown): RotationOverlap | undefined {
  return ROTATION_OVERLAPS.find((overlap) => overlap.value === value);
}
