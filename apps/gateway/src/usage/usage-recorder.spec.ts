import { latencyQuantile, LATENCY_COLUMNS } from './usage-counts';
import {
  ANONYMOUS,
  bucketsOf,
  FOLDED_OPERATION,
  minuteRowsOf,
  OVERFLOW,
  UsageBucket,
  UsageRecorder,
} from './usage-recorder';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 24, 15, 0, 0);

const limits = (maxBuckets: number, maxMinuteCells = 1_000_000) => ({ maxBuckets, maxMinuteCells });

function total(
  buckets: UsageBucket[],
  field: 'requests' | 'ok' | 'clientErrors' | 'rateLimited' | 'serverErrors',
): number {
  return buckets.reduce((sum, b) => sum + b[field], 0);
}

describe('UsageRecorder', () => {
  it('counts each answer once in its hour, per key, by outcome', () => {
    const recorder = new UsageRecorder(limits(100));
    for (const status of [200, 201, 304, 400, 404, 429, 503, 500])
      recorder.record('acme', 'k1', status, 3, T0 + 10, 'listPets', 0);
    recorder.record('acme', 'k2', 200, 30, T0 + HOUR - 1, 'listPets', 0);
    recorder.record('acme', 'k1', 200, 30, T0 + HOUR, 'listPets', 0);
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
    const recorder = new UsageRecorder(limits(100));
    for (let i = 0; i < 10_000; i += 1) recorder.record(undefined, undefined, 401, 1, T0, 'listPets', 0);
    const buckets = bucketsOf(recorder.drain());
    expect(buckets).toHaveLength(1);
    expect(buckets[0]).toMatchObject({ consumer: ANONYMOUS, keyId: '', requests: 10_000, clientErrors: 10_000 });
  });

  it('holds at most maxBuckets with 100,000 distinct consumers in one hour, totals exact (the rest in the overflow row)', () => {
    let folded = 0;
    const recorder = new UsageRecorder({ ...limits(50_000), onFold: () => (folded += 1) });
    for (let i = 0; i < 100_000; i += 1) {
      recorder.record(`c${i}`, `key-${i}`, i % 10 === 0 ? 429 : 200, 2, T0 + i, 'listPets', 0);
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
    const recorder = new UsageRecorder(limits(3));
    recorder.record('a', 'ka', 200, 1, T0, 'listPets', 0);
    recorder.record('b', 'kb', 200, 1, T0, 'listPets', 0);
    recorder.record(undefined, undefined, 401, 1, T0, 'listPets', 0);
    const failed = recorder.drain();
    recorder.record('a', 'ka', 500, 1, T0 + 5, 'listPets', 0);
    recorder.record('c', 'kc', 200, 1, T0 + 5, 'listPets', 0);
    recorder.record('d', 'kd', 200, 1, T0 + 5, 'listPets', 0);
    recorder.restore(failed);
    expect(recorder.size).toBe(3);
    const buckets = bucketsOf(recorder.drain());
    expect(total(buckets, 'requests')).toBe(6);
    expect(buckets.find((b) => b.keyId === 'ka')).toMatchObject({ requests: 2, ok: 1, serverErrors: 1 });
    expect(buckets.find((b) => b.consumer === ANONYMOUS)).toMatchObject({ requests: 1 });
    expect(buckets.find((b) => b.consumer === OVERFLOW)).toMatchObject({ requests: 1 });
  });
});

describe('UsageRecorder, per minute and operation', () => {
  it("keeps a consumer's answers per minute, operation and outcome with their credits, its keys summed", () => {
    const recorder = new UsageRecorder(limits(100));
    recorder.record('acme', 'k1', 200, 1, T0 + 10, 'listPets', 2);
    recorder.record('acme', 'k2', 200, 1, T0 + 20, 'listPets', 3);
    recorder.record('acme', 'k1', 429, 1, T0 + 30, 'listPets', 0);
    recorder.record('acme', 'k1', 500, 1, T0 + 40, 'createPet', 5);
    recorder.record('acme', 'k1', 404, 1, T0 + MINUTE, 'listPets', 2);
    recorder.record('zed', 'kz', 201, 1, T0 + MINUTE - 1, 'createPet', 0);
    recorder.record(undefined, undefined, 401, 1, T0, 'listPets', 0);
    const rows = minuteRowsOf(bucketsOf(recorder.drain()));
    // [ok, client errors, rate limited, server errors, then their credits], in (minute, consumer, operation) order.
    expect(rows).toEqual([
      { minute: T0, consumer: 'acme', operation: 'createPet', cell: [0, 0, 0, 1, 0, 0, 0, 5] },
      { minute: T0, consumer: 'acme', operation: 'listPets', cell: [2, 0, 1, 0, 5, 0, 0, 0] },
      { minute: T0, consumer: 'zed', operation: 'createPet', cell: [1, 0, 0, 0, 0, 0, 0, 0] },
      { minute: T0 + MINUTE, consumer: 'acme', operation: 'listPets', cell: [0, 1, 0, 0, 0, 2, 0, 0] },
    ]);
  });

  it('holds at most maxMinuteCells (plus one folded cell per key): the rest in the key\'s "(overflow)" cell, totals exact', () => {
    let folded = 0;
    const recorder = new UsageRecorder({ ...limits(100, 10), onMinuteFold: () => (folded += 1) });
    for (let minute = 0; minute < 60; minute += 1) {
      recorder.record('acme', 'k1', 200, 1, T0 + minute * MINUTE, 'listPets', 1);
      recorder.record('acme', 'k1', 503, 1, T0 + minute * MINUTE, 'getPet', 0);
    }
    expect(recorder.minuteCells).toBe(11);
    const rows = minuteRowsOf(bucketsOf(recorder.drain()));
    expect(rows).toHaveLength(11);
    expect(folded).toBe(110);
    expect(rows.find((row) => row.operation === FOLDED_OPERATION)).toEqual({
      minute: T0,
      consumer: 'acme',
      operation: FOLDED_OPERATION,
      cell: [55, 0, 0, 55, 55, 0, 0, 0],
    });
    const sum = rows.reduce((into, row) => into.map((n, i) => n + row.cell[i]), [0, 0, 0, 0, 0, 0, 0, 0]);
    expect(sum).toEqual([60, 0, 0, 60, 60, 0, 0, 0]);
  });

  it('counts the minutes of a batch that could not be written back in, merged with what came meanwhile', () => {
    const recorder = new UsageRecorder(limits(100));
    recorder.record('acme', 'k1', 200, 1, T0, 'listPets', 2);
    const failed = recorder.drain();
    recorder.record('acme', 'k1', 200, 1, T0 + 5, 'listPets', 3);
    recorder.restore(failed);
    expect(minuteRowsOf(bucketsOf(recorder.drain()))).toEqual([
      { minute: T0, consumer: 'acme', operation: 'listPets', cell: [2, 0, 0, 0, 5, 0, 0, 0] },
    ]);
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
