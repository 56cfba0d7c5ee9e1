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
const noBan = { threshold: 1_000, durationMs: 1_000, graceMs: 0 };

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

  it('bans on the strike after the threshold: the first 429 is no strike, the next refusals are', () => {
    const ban = { threshold: 2, durationMs: 300_000, graceMs: 0 };
    for (let i = 0; i < 3; i += 1) store.decide('a', windows, ban);
    // The window's first 429, then strikes 1 and 2 (tolerated), then strike 3 (more than 2) bans.
    expect(store.decide('a', windows, ban).outcome).toBe('limited');
    expect(store.decide('a', windows, ban).outcome).toBe('limited');
    expect(store.decide('a', windows, ban).outcome).toBe('limited');
    expect(store.decide('a', windows, ban)).toMatchObject({ outcome: 'banned', retryAfterMs: 300_000 });
    clock.current += 100_000;
    expect(store.decide('a', windows, ban)).toMatchObject({ outcome: 'banned', retryAfterMs: 200_000 });
    clock.current += 200_000;
    expect(store.decide('a', windows, ban).outcome).toBe('allowed');
  });

  it('counts no strike within the grace period after the first 429, so a burst is refused but not banned', () => {
    const ban = { threshold: 2, durationMs: 300_000, graceMs: 1_000 };
    for (let i = 0; i < 3; i += 1) store.decide('a', windows, ban);
    const burst = Array.from({ length: 200 }, () => store.decide('a', windows, ban).outcome);
    expect(new Set(burst)).toEqual(new Set(['limited']));
    clock.current += 999;
    expect(store.decide('a', windows, ban).outcome).toBe('limited');
    // Past the grace period a client that keeps sending is struck, and banned after the threshold.
    clock.current += 1;
    expect([1, 2, 3].map(() => store.decide('a', windows, ban).outcome)).toEqual(['limited', 'limited', 'banned']);
  });

  it('forgets strikes when the limiting window resets, and opens a new grace period with the next 429', () => {
    const ban = { threshold: 2, durationMs: 300_000, graceMs: 0 };
    for (let i = 0; i < 5; i += 1) store.decide('a', [windows[0]], ban);
    clock.current += 60_000;
    const outcomes = Array.from({ length: 7 }, () => store.decide('a', [windows[0]], ban).outcome);
    expect(outcomes).toEqual(['allowed', 'allowed', 'allowed', 'limited', 'limited', 'limited', 'banned']);
  });

  it('marks the one decision that started a ban, not the refusals during it', () => {
    const ban = { threshold: 1, durationMs: 300_000, graceMs: 0 };
    const decisions = Array.from({ length: 8 }, () => store.decide('a', [windows[0]], ban));
    expect(decisions.map((d) => d.outcome)).toEqual([
      'allowed',
      'allowed',
      'allowed',
      'limited',
      'limited',
      'banned',
      'banned',
      'banned',
    ]);
    expect(
      decisions.map((d) => (d.outcome === 'banned' ? d.started === true : undefined)).filter((s) => s !== undefined),
    ).toEqual([true, false, false]);
  });

  it('unbans: the ban, the strikes and the grace period go, the window counts stay', async () => {
    const ban = { threshold: 1, durationMs: 300_000, graceMs: 0 };
    for (let i = 0; i < 6; i += 1) store.decide('a', [windows[0]], ban);
    expect(store.decide('a', [windows[0]], ban).outcome).toBe('banned');
    await store.unban('a');
    expect((await store.usage('a', [windows[0]])).bannedForMs).toBe(0);
    // Still 3 of 3 in the minute: refused, and as many refusals as the first time before another ban.
    expect([1, 2, 3].map(() => store.decide('a', [windows[0]], ban).outcome)).toEqual(['limited', 'limited', 'banned']);
    store.forgetBan('a');
    store.forgetBan('never-seen');
    expect(store.decide('a', [windows[0]], ban).outcome).toBe('limited');
  });

  it('carries on from what Redis last said: counts and bans are remembered for the fallback', () => {
    store.remember('a', {
      outcome: 'allowed',
      windows: [
        { ...windows[0], count: 2, resetMs: 30_000 },
        { ...windows[1], count: 2, resetMs: 80_000_000 },
      ],
    });
    expect(store.decide('a', windows, noBan)).toMatchObject({
      outcome: 'allowed',
      windows: [{ count: 3 }, { count: 3 }],
    });
    expect(store.decide('a', windows, noBan).outcome).toBe('limited');
    store.remember('b', {
      outcome: 'banned',
      retryAfterMs: 400_000,
      windows: [{ ...windows[0], count: 3, resetMs: 10_000 }],
    });
    expect(store.decide('b', windows, noBan)).toMatchObject({ outcome: 'banned', retryAfterMs: 400_000 });
  });

  it('holds at most maxTrackers trackers, evicting the least recently seen, whatever the flood', () => {
    const bounded = new MemoryRateLimitStore(clock, 100);
    const never = { ...noBan, threshold: Number.MAX_SAFE_INTEGER };
    let largest = 0;
    for (let i = 0; i < 10_000; i += 1) {
      bounded.decide(`anonymous:10.0.${i >> 8}.${i & 255}`, windows, never);
      if (i % 7 === 0) bounded.decide('consumer:regular', windows, never);
      largest = Math.max(largest, bounded.size);
    }
    expect(largest).toBe(100);
    // The tracker seen all along was never evicted: its counts are intact (limit 3 in the minute window).
    expect(bounded.decide('consumer:regular', windows, never).outcome).toBe('limited');
    // The oldest of the flood were evicted: the first address starts over.
    expect(bounded.decide('anonymous:10.0.0.0', windows, never).windows[0].count).toBe(1);
    void bounded.close();
  });

  it('serves the throttler storage interface', async () => {
    const record = await store.increment('t', 60_000, 1, 5_000, 'minute');
    expect(record).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    expect((await store.increment('t', 60_000, 1, 5_000, 'minute')).isBlocked).toBe(true);
  });
});
