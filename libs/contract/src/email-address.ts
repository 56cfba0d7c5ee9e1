/**
 * One email address (an addr-spec, as the portal's sign-up accepts it): no display name, no list, no whitespace or
 * control character, at most 254 characters (RFC 5321's path limit). Shared by the portal (an account's email) and
 * the gateway (a consumer's contact email), so that whatever the portal records, the admin API accepts and finds.
 */
export const EMAIL_ADDRESS_MAX_LENGTH = 254;

// Local part and domain: no "@", whitespace or C0/DEL/C1 control character; the domain has a dot and a 2+ character TLD.
const ATOM = '[^\\s@\\u0000-\\u001f\\u007f-\\u009f]';
const EMAIL_ADDRESS = new RegExp(`^${ATOM}{1,64}@${ATOM}{1,185}\\.${ATOM}{2,63}$`, 'u');

/** The sentence a refused address gets (after the field's name). */
export const EMAIL_ADDRESS_RULE = `must be one email address such as name@example.com (at most ${EMAIL_ADDRESS_MAX_LENGTH} characters, no display name or whitespace)`;

export function isEmailAddress(value: string): boolean {
  return value.length <= EMAIL_ADDRESS_MAX_LENGTH && EMAIL_ADDRESS.test(value);
}

/** Addresses are stored and compared lower-cased: "Ada@Example.com" and "ada@example.com" are one developer. */
export function normalizeEmailAddress(value: string): string {
  return value.toLowerCase();
}
