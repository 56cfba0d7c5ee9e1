import { stripeSendDecision } from './stripe-replay-window';

const HOUR_MS = 3_600_000;
const NOW = Date.parse('2026-11-24T16:00:00Z');
const start = NOW - 2 * HOUR_MS;

describe("stripeSendDecision: Stripe's 24 h identifier window and its timestamp range", () => {
  it('sends an aggregate never sent, however late within 35 days: Stripe has never seen its identifier', () => {
    expect(stripeSendDecision(start, { acknowledged: false }, NOW)).toEqual({ send: true });
    expect(stripeSendDecision(NOW - 30 * 24 * HOUR_MS, { acknowledged: false }, NOW)).toEqual({ send: true });
  });

  it('never sends an acknowledged aggregate again', () => {
    expect(stripeSendDecision(start, { acknowledged: true, firstAttemptAt: NOW - 60_000 }, NOW)).toEqual({
      send: false,
      reason: 'acknowledged',
    });
  });

  it('resends an unacknowledged one while its first attempt is within 23 h (Stripe still deduplicates it)', () => {
    const firstAttemptAt = NOW - 23 * HOUR_MS + 1;
    expect(stripeSendDecision(start, { acknowledged: false, firstAttemptAt }, NOW)).toEqual({ send: true });
  });

  it('holds an unacknowledged one whose first attempt is 23 h old or more: a resend might be counted twice', () => {
    const firstAttemptAt = NOW - 23 * HOUR_MS;
    expect(stripeSendDecision(start, { acknowledged: false, firstAttemptAt }, NOW)).toEqual({
      send: false,
      reason: 'identifier_expired',
    });
    expect(stripeSendDecision(start, { acknowledged: false, firstAttemptAt: NOW - 3 * 24 * HOUR_MS }, NOW)).toEqual({
      send: false,
      reason: 'identifier_expired',
    });
  });

  it('refuses timestamps Stripe refuses: older than 35 days (less the margin), or over 5 minutes ahead', () => {
    const day = 24 * HOUR_MS;
    expect(stripeSendDecision(NOW - 35 * day + HOUR_MS, { acknowledged: false }, NOW)).toEqual({ send: true });
    expect(stripeSendDecision(NOW - 35 * day + HOUR_MS - 1, { acknowledged: false }, NOW)).toEqual({
      send: false,
      reason: 'too_old',
    });
    expect(stripeSendDecision(NOW + 5 * 60_000, { acknowledged: false }, NOW)).toEqual({ send: true });
    expect(stripeSendDecision(NOW + 5 * 60_000 + 1, { acknowledged: false }, NOW)).toEqual({
      send: false,
      reason: 'in_future',
    });
  });
});
