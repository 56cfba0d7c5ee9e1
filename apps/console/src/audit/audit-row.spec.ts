import type { AdminAuditEntry } from '@app/web';
import { auditRowOf, personOf } from './audit-row';

const entry = (over: Partial<AdminAuditEntry>): AdminAuditEntry => ({
  id: '1',
  at: '2026-11-27T16:20:07.312Z',
  actorId: null,
  actorName: 'console-audit',
  action: 'user.sign-in',
  targetConsumer: null,
  targetKey: null,
  targetToken: null,
  targetKeyHint: null,
  changes: null,
  requestId: null,
  source: '127.0.0.1',
  onBehalfOf: null,
  endUserAddress: null,
  count: 1,
  aggregated: false,
  ...over,
});

describe('the audit page rows', () => {
  it('names the person of a sign-in event, their address and why, and how many on an aggregate row', () => {
    expect(auditRowOf(entry({ onBehalfOf: 'operator:alice', endUserAddress: '198.51.100.4' }))).toMatchObject({
      actor: 'console-audit',
      target: 'alice',
      summary: 'Signed in',
      source: '198.51.100.4',
    });
    const failed = entry({
      action: 'user.lockout',
      actorName: 'portal',
      onBehalfOf: 'account:dev@example.com',
      endUserAddress: '2001:db8:1:2::/64',
      changes: { reason: { before: null, after: 'PAIR_LIMIT' }, minute: { before: null, after: 'x' } },
      count: 12,
      aggregated: true,
    });
    expect(auditRowOf(failed)).toMatchObject({
      target: 'dev@example.com',
      summary: 'Refused by the sign-in throttle: PAIR_LIMIT (×12 in that minute)',
      source: '2001:db8:1:2::/64',
    });
    expect(
      auditRowOf(
        entry({ action: 'user.sign-in-failed', changes: { reason: { before: null, after: 'UNAUTHORIZED' } } }),
      ),
    ).toMatchObject({ target: 'unknown', summary: 'Sign-in failed: UNAUTHORIZED', source: '127.0.0.1' });
    const unlinked = entry({
      action: 'user.identity-unlinked',
      actorName: 'portal',
      onBehalfOf: 'account:dev@example.com (dev at https://login.company.example)',
    });
    expect(auditRowOf(unlinked)).toMatchObject({
      target: 'dev@example.com (dev at https://login.company.example)',
      summary: 'Unlinked an identity provider',
    });
  });

  it('says who a web app acted for and which key a change was about', () => {
    const row = auditRowOf(
      entry({
        action: 'key.revoke',
        actorName: 'portal',
        onBehalfOf: 'account:3f2c9a4e-1b2c-4d5e-8f90-123456789abc dev@example.com',
        targetConsumer: 'portal-1a2b',
        targetKeyHint: 'petk_F7WF…',
        changes: { revokedAt: { before: null, after: '2026-11-27T17:20:04.161Z' } },
      }),
    );
    expect(row).toMatchObject({
      actor: 'portal for dev@example.com',
      target: 'portal-1a2b',
      summary: 'key petk_F7WF…; revokedAt: null → 2026-11-27 17:20 UTC',
    });
    expect(personOf('operator:bob')).toBe('bob');
    expect(personOf(null)).toBeNull();
  });
});
