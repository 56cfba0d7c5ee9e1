import { randomBytes } from 'node:crypto';
import { filterCapacity, KeyFilter, KeyHashFilter, KeyHashSource } from './key-filter';

const randomHash = () => randomBytes(32).toString('hex');

/** A key store the test fills, pages through and breaks at will; `gate` holds a rebuild between two pages. */
function fakeSource(hashes: Set<string>) {
  const state = { builds: 0, down: false, gate: undefined as Promise<void> | undefined };
  const source: KeyHashSource = {
    countValidKeyHashes: async () => {
      state.builds += 1;
      if (state.down) throw new Error('connect ECONNREFUSED');
      return hashes.size;
    },
    async *validKeyHashPages(pageSize: number) {
      const all = [...hashes].sort();
      for (let i = 0; i < all.length; i += pageSize) {
        yield all.slice(i, i + pageSize);
        if (state.gate) await state.gate;
      }
    },
  };
  return { source, state };
}

describe('KeyHashFilter (Bloom filter over SHA-256 slices)', () => {
  it('has no false negatives and about 1 % false positives at capacity', () => {
    const filter = new KeyHashFilter(50_000);
    const added = Array.from({ length: 50_000 }, randomHash);
    for (const hash of added) filter.add(hash);
    expect(added.every((hash) => filter.mightContain(hash))).toBe(true);
    const probes = 100_000;
    let positives = 0;
    for (let i = 0; i < probes; i += 1) if (filter.mightContain(randomHash())) positives += 1;
    // Expected 1 % (0.8-1.0 % for k = 7 at 9.6 bits per key); the sampling error on 100,000 probes is ~0.03 %.
    expect(positives / probes).toBeLessThan(0.015);
  });

  it('reads upper-case hex like lower-case', () => {
    const filter = new KeyHashFilter(10);
    const hash = randomHash();
    filter.add(hash.toUpperCase());
    expect(filter.mightContain(hash)).toBe(true);
  });

  it('takes about 1.3 MB for 1,000,000 keys (sized with 10 % headroom)', () => {
    const bytes = new KeyHashFilter(filterCapacity(1_000_000)).byteLength;
    // 1,110,000 × 9.6 bits = 1,332,000 bytes: 1.2 MB per million at capacity, the headroom on top.
    expect(bytes).toBe(1_332_000);
  });
});

describe('KeyFilter (the valid keys of an instance, kept current)', () => {
  let hashes: Set<string>;
  let fake: ReturnType<typeof fakeSource>;
  let filter: KeyFilter;
  const events = { rebuilt: jest.fn(), failed: jest.fn() };

  beforeEach(() => {
    hashes = new Set(Array.from({ length: 25_000 }, randomHash));
    fake = fakeSource(hashes);
    filter = new KeyFilter(fake.source, 60_000, events);
    events.rebuilt.mockClear();
    events.failed.mockClear();
  });
  afterEach(() => filter.close());

  it('refuses nothing until built, then every hash it was not given', async () => {
    const stranger = randomHash();
    expect(filter.excludes(stranger)).toBe(false);
    await filter.start();
    expect(filter.state.complete).toBe(true);
    expect([...hashes].some((hash) => filter.excludes(hash))).toBe(false);
    expect(filter.excludes(stranger)).toBe(true);
  });

  it('holds a hash named by a change at once, also one named while a rebuild reads the store', async () => {
    await filter.start();
    const issued = randomHash();
    filter.add([issued]);
    expect(filter.excludes(issued)).toBe(false);

    // A rebuild that read the store before the key was committed: the change's hash survives the swap.
    let open!: () => void;
    fake.state.gate = new Promise((resolve) => (open = resolve));
    const rebuilding = filter.rebuild();
    await new Promise((resolve) => setImmediate(resolve));
    const duringRebuild = randomHash();
    filter.add([duringRebuild]);
    open();
    await rebuilding;
    expect(filter.excludes(duringRebuild)).toBe(false);
    // The first one was not in the store: a rebuild drops it (as it drops revoked and expired keys).
    expect(filter.excludes(issued)).toBe(true);
  });

  it('counts once a hash named by two changes', async () => {
    await filter.start();
    const issued = randomHash();
    filter.add([issued]);
    filter.add([issued, issued]);
    expect(filter.excludes(issued)).toBe(false);
    expect(filter.state.keys).toBe(hashes.size + 1);
  });

  it('counts once a key issued while a rebuild reads the store, when the store already holds it', async () => {
    await filter.start();
    // Committed before the rebuild reads the store; its change reaches this instance while the rebuild runs.
    const issued = randomHash();
    hashes.add(issued);
    let open!: () => void;
    fake.state.gate = new Promise((resolve) => (open = resolve));
    const rebuilding = filter.rebuild();
    await new Promise((resolve) => setImmediate(resolve));
    filter.add([issued]);
    open();
    await rebuilding;
    expect(filter.excludes(issued)).toBe(false);
    expect(filter.state.keys).toBe(hashes.size);
  });

  it('refuses nothing after "everything changed" until a rebuild started after it has finished', async () => {
    await filter.start();
    let open!: () => void;
    fake.state.gate = new Promise((resolve) => (open = resolve));
    const periodic = filter.rebuild();
    await new Promise((resolve) => setImmediate(resolve));
    // A bulk import (or a lost message) while that rebuild reads: it may have read past the new keys.
    const imported = randomHash();
    hashes.add(imported);
    filter.invalidate();
    expect(filter.excludes(randomHash())).toBe(false);
    fake.state.gate = undefined;
    open();
    await periodic;
    expect(fake.state.builds).toBe(3);
    expect(filter.state.complete).toBe(true);
    expect(filter.excludes(imported)).toBe(false);
  });

  it('keeps the previous filter when a rebuild fails, and stays open (incomplete) when it has none', async () => {
    await filter.start();
    const stranger = randomHash();
    fake.state.down = true;
    await filter.rebuild();
    expect(events.failed).toHaveBeenCalledWith(expect.any(Error), true);
    expect(filter.excludes(stranger)).toBe(true);

    const cold = new KeyFilter(fake.source, 60_000, events);
    await cold.start();
    expect(cold.state.complete).toBe(false);
    expect(cold.excludes(stranger)).toBe(false);
    fake.state.down = false;
    await cold.rebuild();
    expect(cold.excludes(stranger)).toBe(true);
    cold.close();
  });

  it('is rebuilt at its new size once changes have added more keys than its capacity', async () => {
    hashes.clear();
    await filter.start();
    const capacity = filterCapacity(0);
    for (let i = 0; i <= capacity; i += 1) {
      const hash = randomHash();
      hashes.add(hash);
      filter.add([hash]);
    }
    await filter.rebuild();
    expect(fake.state.builds).toBeGreaterThanOrEqual(2);
    expect(filter.state.keys).toBe(hashes.size);
    expect(filter.state.bytes).toBe(new KeyHashFilter(filterCapacity(hashes.size)).byteLength);
  });
});
