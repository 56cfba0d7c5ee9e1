import { Clock } from '../clock';
import { KeyLookupBatcher } from './key-lookup-batcher';
import type { KeyRecord } from './key-lookup.repository';

class StoppedClock extends Clock {
  tick = 1_000;
  now(): number {
    return 0;
  }
  override monotonic(): number {
    return this.tick;
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyLookupBatcher', () => {
  let clock: StoppedClock;
  let queries: string[][];
  let fail: Error | undefined;
  let batcher: KeyLookupBatcher;
  const build = (queriesPerSecond: number, batchSize: number) =>
    new KeyLookupBatcher(
      async (hashes) => {
        queries.push(hashes);
        if (fail) throw fail;
        return new Map(hashes.filter((h) => h.startsWith('key')).map((h) => [h, { keyId: h } as KeyRecord]));
      },
      clock,
      queriesPerSecond,
      batchSize,
    );

  beforeEach(() => {
    clock = new StoppedClock();
    queries = [];
    fail = undefined;
  });
  afterEach(() => batcher.close());

  it('sends what one turn asks for in queries of at most the batch size, a token each, stamped with their sending', async () => {
    batcher = build(2, 3);
    const answers = Promise.all(['key-1', 'x', 'key-2', 'key-3', 'y'].map((h) => batcher.lookUp(h, false)!));
    expect(queries).toEqual([]); // not before the end of the turn: what else it asks for joins
    clock.tick = 1_500;
    expect(await answers).toEqual([
      { record: { keyId: 'key-1' }, sentAt: 1_500 },
      { record: null, sentAt: 1_500 },
      { record: { keyId: 'key-2' }, sentAt: 1_500 },
      { record: { keyId: 'key-3' }, sentAt: 1_500 },
      { record: null, sentAt: 1_500 },
    ]);
    expect(queries).toEqual([
      ['key-1', 'x', 'key-2'],
      ['key-3', 'y'],
    ]);
  });

  it('sends a paid hash at once without a token, the waiting hashes riding in its query', async () => {
    batcher = build(1, 10);
    await batcher.lookUp('key-0', false); // the one token
    const waiting = batcher.lookUp('key-1', false)!;
    await turn();
    expect(queries).toHaveLength(1);
    const paid = batcher.lookUp('key-2', true)!;
    expect((await paid).record).toEqual({ keyId: 'key-2' });
    expect((await waiting).record).toEqual({ keyId: 'key-1' });
    expect(queries).toEqual([['key-0'], ['key-2', 'key-1']]);
  });

  it('refuses unpaid hashes beyond its bound, never paid ones; a failed query fails its hashes and frees the bound', async () => {
    batcher = build(2, 2); // 2 batches of 2
    expect(batcher.maxHashes).toBe(4);
    fail = new Error('connect ECONNREFUSED');
    const taken = ['a', 'b', 'c', 'd'].map((h) => batcher.lookUp(h, false)!);
    expect(batcher.lookUp('e', false)).toBeUndefined();
    const paid = batcher.lookUp('f', true)!;
    for (const lookup of [...taken, paid]) await expect(lookup).rejects.toThrow('ECONNREFUSED');
    fail = undefined;
    clock.tick += 1_000;
    expect((await batcher.lookUp('key-e', false))?.record).toEqual({ keyId: 'key-e' });
  });
});
