/** Page size of GET /pets (spec 8.1). */
export const LIST_LIMIT = { min: 1, max: 100, default: 20 } as const;

/**
 * Identifiers are int64 on the wire, but JSON numbers are exact in JavaScript only up to 2^53-1;
 * larger values are refused rather than rounded. Identifiers start at 1.
 */
export const ID_RANGE = { min: 1, max: Number.MAX_SAFE_INTEGER } as const;

/**
 * `name` (spec: "not shown"): 1 to 100 Unicode characters, not blank, no control characters (C0, DEL, C1),
 * and well-formed Unicode (no lone surrogates). The name is stored and returned exactly as sent: no trimming.
 */
export const NAME_RULES = {
  minLength: 1,
  maxLength: 100,
  pattern: '^(?!\\s*$)[^\\u0000-\\u001F\\u007F-\\u009F]+$',
} as const;

/** The deprecated GET /pets/{petId} (spec 4.3): deprecated since the 1.0.0 release, removed on 5 December 2030. */
export const GET_PET_DEPRECATION = {
  deprecatedSince: new Date('2026-11-22T00:00:00Z'),
  sunset: new Date('2030-12-05T00:00:00Z'),
  replacement: 'GET /pets with a status filter',
} as const;
