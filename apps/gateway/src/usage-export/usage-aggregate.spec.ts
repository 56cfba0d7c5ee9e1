import { aggregateId, exportableUntil, UsageAggregate } from './usage-aggregate';

const HOUR = Date.parse('2026-11-24T15:00:00Z');
const aggregate: UsageAggregate = {
  consumer: 'acme',
  operation: 'listPets',
  outcome: 'ok',
  bucket: 'hour',
  start: HOUR,
  count: 42,
  credits: 84,
};

describe('aggregateId', () => {
  it('is pinned: the same aggregate gets the same id in every process and release (a change re-bills every sink)', () => {
    // Reproduced outside Node: the first 16 bytes of sha256('["petstore.usage-aggregate.v1","hour",
    // "2026-11-24T15:00:00.000Z","acme","listPets","ok"]'), version nibble 8, variant bits 10 (docs/usage-export.md).
    expect(aggregateId(aggregate)).toBe('863e4853-c342-864c-8d80-5a5c9bcfabe5');
  });

  it('is a UUID of version 8 and the RFC 9562 variant', () => {
    expect(aggregateId(aggregate)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('depends on the identifying content only, never on the values', () => {
    const otherValues: UsageAggregate = { ...aggregate, count: 1, credits: null };
    expect(aggregateId(otherValues)).toBe(aggregateId(aggregate));
  });

  it('changes with each identifying field', () => {
    const variants: UsageAggregate[] = [
      { ...aggregate, consumer: 'acme2' },
      { ...aggregate, operation: 'createPet' },
      { ...aggregate, outcome: 'rate_limited' },
      { ...aggregate, bucket: 'minute' },
      { ...aggregate, start: HOUR + 3_600_000 },
    ];
    const ids = new Set([aggregate, ...variants].map(aggregateId));
    expect(ids.size).toBe(variants.length + 1);
  });

  it('cannot be made equal by moving text between fields', () => {
    expect(aggregateId({ ...aggregate, consumer: 'a', operation: 'b,c' })).not.toBe(
      aggregateId({ ...aggregate, consumer: 'a,b', operation: 'c' }),
    );
  });
});

describe('exportableUntil', () => {
  it('ends at the last bucket that has ended and settled', () => {
    // 16:00:59 with a minute to settle: the 15:00 hour is not settled yet.
    expect(exportableUntil(Date.parse('2026-11-24T16:00:59Z'), 60_000, 'hour')).toBe(HOUR);
    expect(exportableUntil(Date.parse('2026-11-24T16:01:00Z'), 60_000, 'hour')).toBe(HOUR + 3_600_000);
    expect(exportableUntil(Date.parse('2026-11-24T16:05:10Z'), 60_000, 'minute')).toBe(
      Date.parse('2026-11-24T16:04:00Z'),
    );
  });
});
