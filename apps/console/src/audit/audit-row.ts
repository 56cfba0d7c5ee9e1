import type { AdminAuditEntry } from '@app/web';
import type { AuditRow } from '../console.views';
import { describeChanges } from './describe-changes';

export type { AuditRow };

/** A person as a web app names them (`account:<id> <email>`, `account:<email>`, `operator:<name>`), shortest form. */
export function personOf(onBehalfOf: string | null): string | null {
  if (onBehalfOf === null) return null;
  const account = /^account:(?:[0-9a-f-]{36} )?(.+)$/.exec(onBehalfOf);
  if (account) return account[1];
  const operator = /^operator:(.+)$/.exec(onBehalfOf);
  return operator ? operator[1] : onBehalfOf;
}

/** Who acted, as the audit page says it: the token, and the person it acted for (`portal for dev@example.com`). */
export function actorOf(e: Pick<AdminAuditEntry, 'actorName' | 'onBehalfOf'>): string {
  const person = personOf(e.onBehalfOf);
  return person === null ? e.actorName : `${e.actorName} for ${person}`;
}

/** The web apps' sign-in events (POST /audit/events), as a sentence. */
const SIGN_IN_TEXT: Record<string, string> = {
  'user.sign-in': 'Signed in',
  'user.sign-in-failed': 'Sign-in failed',
  'user.lockout': 'Refused by the sign-in throttle',
  'user.identity-linked': 'Linked an identity provider',
  'user.identity-unlinked': 'Unlinked an identity provider',
};

export function auditRowOf(e: AdminAuditEntry): AuditRow {
  const person = personOf(e.onBehalfOf);
  const source = e.endUserAddress ?? e.source ?? '';
  const times = e.aggregated ? ` (×${e.count} in that minute)` : '';
  const signIn = SIGN_IN_TEXT[e.action];
  if (signIn !== undefined) {
    const reason = e.changes?.reason?.after;
    return {
      id: e.id,
      at: e.at,
      actor: e.actorName,
      action: e.action,
      target: person ?? 'unknown',
      summary: `${signIn}${typeof reason === 'string' ? `: ${reason}` : ''}${times}`,
      source,
    };
  }
  return {
    id: e.id,
    at: e.at,
    actor: actorOf(e),
    action: e.action,
    target: e.targetConsumer ?? e.targetToken ?? '',
    summary: `${[e.targetKeyHint ? `key ${e.targetKeyHint}` : '', describeChanges(e.changes)].filter(Boolean).join('; ')}${times}`,
    source,
  };
}
