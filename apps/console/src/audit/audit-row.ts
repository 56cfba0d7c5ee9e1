import type { AdminAuditEntry } from '@app/web';
import { describeChanges } from './describe-changes';

/** One line of the audit page: every cell a short text, so that a row reads on one line at 1280 px. */
export interface AuditRow {
  id: string;
  at: string;
  /** The token, and the person a web app named for it (`portal for dev@example.com`). */
  actor: string;
  action: string;
  /** The consumer or token changed; for a sign-in event, the person. */
  target: string;
  summary: string;
  /** The person's address when a web app named one, else the caller's. */
  source: string;
}

/** A person as a web app names them (`account:<id> <email>`, `account:<email>`, `operator:<name>`), shortest form. */
export function personOf(onBehalfOf: string | null): string | null {
  if (onBehalfOf === null) return null;
  const account = /^account:(?:[0-9a-f-]{36} )?(.+)$/.exec(onBehalfOf);
  if (account) return account[1];
  const operator = /^operator:(.+)$/.exec(onBehalfOf);
  return operator ? operator[1] : onBehalfOf;
}

/** The web apps' sign-in events (POST /audit/events), as a sentence. */
const SIGN_IN_TEXT: Record<string, string> = {
  'user.sign-in': 'Signed in',
  'user.sign-in-failed': 'Sign-in failed',
  'user.lockout': 'Refused by the sign-in throttle',
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
    actor: person === null ? e.actorName : `${e.actorName} for ${person}`,
    action: e.action,
    target: e.targetConsumer ?? e.targetToken ?? '',
    summary: `${[e.targetKeyHint ? `key ${e.targetKeyHint}` : '', describeChanges(e.changes)].filter(Boolean).join('; ')}${times}`,
    source,
  };
}
