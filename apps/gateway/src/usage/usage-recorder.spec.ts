import { latencyQuantile, LATENCY_COLUMNS } from './usage-counts';
import { ANONYMOUS, bucketsOf, OVERFLOW, UsageBucket, UsageRecorder } from './usage-recorder';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 24, 15, 0, 0);

function total(
  buckets: UsageBucket[],
  field: 'requests' | 'ok' | 'clientErrors' | 'rateLimited' | 'serverErrors',
): number {
  return buckets.reduce((sum, b) => sum + b[field], 0);
}

describe('UsageRecorder', () => {
  it('counts each answer once in its hour, per key, by outcome', () => {
    const recorder = new UsageRecorder(100);
    for (const status of [200, 201, 304, 400, 404, 429, 503, 500]) recorder.record('acme', 'k1', status, 3, T0 + 10);
    recorder.record('acme', 'k2', 200, 30, T0 + HOUR - 1);
    recorder.record('acme', 'k1', 200, 30, T0 + HOUR);
    const buckets = bucketsOf(recorder.drain());
    const k1 = buckets.find((b) => b.keyId === 'k1' && b.hour === T0)!;
    expect(k1).toMatchObject({
      consumer: 'acme',
      requests: 8,
      ok: 3,
      clientErrors: 2,
      rateLimited: 1,
      serverErrors: 2,
      latencySumMs: 24,
    });
    expect(buckets.find((b) => b.keyId === 'k2')).toMatchObject({ hour: T0, requests: 1 });
    expect(buckets.find((b) => b.keyId === 'k1' && b.hour === T0 + HOUR)).toMatchObject({ requests: 1 });
    expect(bucketsOf(recorder.drain())).toEqual([]);
  });

  it('sums answers without a valid key into one anonymous row, whatever the key or address', () => {
    const recorder = new UsageRecorder(100);
    for (let i = 0; i < 10_000; i += 1) recorder.record(undefined, undefined, 401, 1, T0);
    const buckets = bucketsOf(recorder.drain());
    expect(buckets).toHaveLength(1);
    expect(buckets[0]).toMatchObject({ consumer: ANONYMOUS, keyId: '', requests: 10_000, clientErrors: 10_000 });
  });

  it('holds at most maxBuckets with 100,000 distinct consumers in one hour, totals exact (the rest in the overflow row)', () => {
    let folded = 0;
    const recorder = new UsageRecorder(50_000, () => (folded += 1));
    for (let i = 0; i < 100_000; i += 1) {
      recorder.record(`c${i}`, `key-${i}`, i % 10 === 0 ? 429 : 200, 2, T0 + i);
      if (i % 1000 === 0) expect(recorder.size).toBeLessThanOrEqual(50_000);
    }
    const buckets = bucketsOf(recorder.drain());
    expect(buckets).toHaveLength(50_001);
    expect(total(buckets, 'requests')).toBe(100_000);
    expect(total(buckets, 'rateLimited')).toBe(10_000);
    expect(total(buckets, 'ok')).toBe(90_000);
    expect(buckets.find((b) => b.consumer === OVERFLOW)).toMatchObject({ requests: 50_000 });
    expect(folded).toBe(50_000);
  });

  it('counts a batch that could not be written back in, merged with what came meanwhile, still bounded', () => {
    const recorder = new UsageRecorder(3);
    recorder.record('a', 'ka', 200, 1, T0);
    recorder.record('b', 'kb', 200, 1, T0);
    recorder.record(undefined, undefined, 401, 1, T0);
    const failed = recorder.drain();
    recorder.record('a', 'ka', 500, 1, T0 + 5);
    recorder.record('c', 'kc', 200, 1, T0 + 5);
    recorder.record('d', 'kd', 200, 1, T0 + 5);
    recorder.restore(failed);
    expect(recorder.size).toBe(3);
    const buckets = bucketsOf(recorder.drain());
    expect(total(buckets, 'requests')).toBe(6);
    expect(buckets.find((b) => b.keyId === 'ka')).toMatchObject({ requests: 2, ok: 1, serverErrors: 1 });
    expect(buckets.find((b) => b.consumer === ANONYMOUS)).toMatchObject({ requests: 1 });
    expect(buckets.find((b) => b.consumer === OVERFLOW)).toMatchObject({ requests: 1 });
  });
});

describe('latencyQuantile', () => {
  it('interpolates inside the bucket the quantile falls in', () => {
    const latency = new Array<number>(LATENCY_COLUMNS.length).fill(0);
    latency[0] = 50; // 0-5 ms
    latency[2] = 50; // 10-25 ms
    expect(latencyQuantile(latency, 0.5)).toBe(5);
    expect(latencyQuantile(latency, 0.95)).toBe(23.5);
  });

  it("is null without answers, and the open bucket's lower bound beyond the last bound", () => {
    const latency = new Array<number>(LATENCY_COLUMNS.length).fill(0);
    expect(latencyQuantile(latency, 0.5)).toBeNull();
    latency[LATENCY_COLUMNS.length - 1] = 3;
    expect(latencyQuantile(latency, 0.95)).toBe(2500);
  });
});
