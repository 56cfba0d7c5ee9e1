import { Clock } from '../clock';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import { WindowSpec } from './rate-limit-store';

class TestClock extends Clock {
  current = 1_000_000;
  now(): number {
    return this.current;
  }
}

const windows: WindowSpec[] = [
  { name: 'minute', limit: 3, ttlMs: 60_000 },
  { name: 'day', limit: 5, ttlMs: 86_400_000 },
];
const noBan = { threshold: 1_000, durationMs: 1_000 };

describe('MemoryRateLimitStore', () => {
  let clock: TestClock;
  let store: MemoryRateLimitStore;
  beforeEach(() => {
    clock = new TestClock();
    store = new MemoryRateLimitStore(clock);
  });
  afterEach(() => store.close());

  it('admits exactly the limit, counting each admitted request in every window', () => {
    const outcomes = [1, 2, 3, 4].map(() => store.decide('a', windows, noBan));
    expect(outcomes.map((d) => d.outcome)).toEqual(['allowed', 'allowed', 'allowed', 'limited']);
    expect(outcomes[2].windows.map((w) => w.count)).toEqual([3, 3]);
  });

  it('does not count refused requests, so the quota is whole again when the window resets', () => {
    for (let i = 0; i < 10; i += 1) store.decide('a', windows, noBan);
    clock.current += 60_000;
    const after = store.decide('a', windows, noBan);
    expect(after.outcome).toBe('allowed');
    expect(after.windows.map((w) => w.count)).toEqual([1, 4]);
  });

  it('reports the window that refused and the time until it resets', () => {
    for (let i = 0; i < 3; i += 1) store.decide('a', windows, noBan);
    clock.current += 20_000;
    const refused = store.decide('a', windows, noBan);
    expect(refused).toMatchObject({ outcome: 'limited', window: 'minute', retryAfterMs: 40_000 });
  });

  it('refuses on the day window once it is spent, whatever the minute window says', () => {
    for (let i = 0; i < 3; i += 1) store.decide('a', windows, noBan);
    clock.current += 60_000;
    store.decide('a', windows, noBan);
    store.decide('a', windows, noBan);
    const refused = store.decide('a', windows, noBan);
    expect(refused).toMatchObject({ outcome: 'limited', window: 'day', retryAfterMs: 86_400_000 - 60_000 });
  });

  it('keeps trackers apart', () => {
    for (let i = 0; i < 3; i += 1) store.decide('a', windows, noBan);
    expect(store.decide('a', windows, noBan).outcome).toBe('limited');
    expect(store.decide('b', windows, noBan).outcome).toBe('allowed');
  });

  it('bans a tracker that sends more than the threshold after its 429, for the ban duration', () => {
    const ban = { threshold: 2, durationMs: 300_000 };
    for (let i = 0; i < 3; i += 1) store.decide('a', windows, ban);
    expect(store.decide('a', windows, ban).outcome).toBe('limited');
    expect(store.decide('a', windows, ban).outcome).toBe('limited');
    expect(store.decide('a', windows, ban)).toMatchObject({ outcome: 'banned', retryAfterMs: 300_000 });
    clock.current += 100_000;
    expect(store.decide('a', windows, ban)).toMatchObject({ outcome: 'banned', retryAfterMs: 200_000 });
    clock.current += 200_000;
    expect(store.decide('a', windows, ban).outcome).toBe('allowed');
  });

  it('forgets strikes when the limiting window resets', () => {
    const ban = { threshold: 2, durationMs: 300_000 };
    for (let i = 0; i < 5; i += 1) store.decide('a', [windows[0]], ban);
    clock.current += 60_000;
    for (let i = 0; i < 5; i += 1) store.decide('a', [windows[0]], ban);
    expect(store.decide('a', [windows[0]], ban).outcome).toBe('banned');
  });

  it('serves the throttler storage interface', async () => {
    const record = await store.increment('t', 60_000, 1, 5_000, 'minute');
    expect(record).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    expect((await store.increment('t', 60_000, 1, 5_000, 'minute')).isBlocked).toBe(true);
  });
});
