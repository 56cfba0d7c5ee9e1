import type { RefusalSentences } from '@app/web';

/**
 * An allowed-addresses field as the operator types it: addresses and CIDR ranges separated by spaces, commas or new
 * lines; empty is anywhere (null). The admin API judges each entry (its one rule, allowed-addresses.ts): the page
 * only splits what was typed.
 */
export function addressListFrom(typed: string): string[] | null {
  const entries = typed.split(/[\s,]+/).filter((entry) => entry !== '');
  return entries.length === 0 ? null : entries;
}

/** A stored allowedAddresses value as the page shows it (and the form holds it): "anywhere" is the empty field. */
export function addressListText(ranges: readonly string[] | null | undefined): string {
  return ranges ? ranges.join(', ') : '';
}

/** What an allowed-addresses form says when the admin API refuses it (chosen by code). */
export const ADDRESS_REFUSALS: RefusalSentences = {
  VALIDATION_FAILED:
    'These addresses were not accepted: type IPv4 or IPv6 addresses or CIDR ranges (such as 10.1.0.0/16 or 2001:db8::/32), at most 100, separated by spaces or commas; leave the field empty for anywhere.',
  NOT_FOUND: 'No such key of this consumer.',
};

/** What the bind form says when the admin API refuses it (chosen by code). */
export const BINDING_REFUSALS: RefusalSentences = {
  VALIDATION_FAILED:
    "This client was not bound: the issuer must be one of the gateway's configured issuers (OAUTH_ISSUERS), written exactly as configured, and the client id 1 to 255 characters of plain text.",
  NOT_FOUND: 'No such client binding of this consumer.',
};
