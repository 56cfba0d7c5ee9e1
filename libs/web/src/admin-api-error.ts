/** The admin API's Error body, as a page shows it: what went wrong, in the API's own words, and its details. */
export class AdminApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The body's `details`, on the codes that have some (WEBHOOK_TARGET_REFUSED: `reason`). */
    readonly details: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'AdminApiError';
  }
}

/** The admin API's Error body (`{code, message, status}`), told apart from anything else a proxy might answer. */
export function isErrorBody(value: unknown): value is { code: string; message: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/** The Error body's `details`: its string fields, nothing else (an empty record without any). */
export function errorDetailsOf(body: object): Record<string, string> {
  const details = (body as { details?: unknown }).details;
  if (typeof details !== 'object' || details === null) return {};
  return Object.fromEntries(
    Object.entries(details).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
