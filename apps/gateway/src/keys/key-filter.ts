/**
 * A Bloom filter of key hashes (SHA-256, 64 hex characters): "certainly not a key" or "maybe a key", in a few
 * bits per key. Its k bit positions are k 32-bit slices of the hash itself: a SHA-256 is already uniformly
 * random, so the filter needs no hash function of its own (and reads the hex text without allocating).
 *
 * Why no library: none is installed in this repository (no bloom, cuckoo or xor filter package), and what the
 * gateway needs is these few lines over the hash it already computes; a library would hash the hash again.
 */
export class KeyHashFilter {
  /** Bits per key for 1 % false positives at capacity: -ln(0.01) / ln(2)². */
  static readonly BITS_PER_KEY = 9.6;
  /** Bit positions per key (optimal for 1 %: 6.6); seven 32-bit slices use 224 of the hash's 256 bits. */
  static readonly K = 7;

  private readonly words: Uint32Array;
  private readonly bitCount: number;
  /** Hashes added (with repetitions): past `capacity`, the false-positive rate climbs above 1 %. */
  added = 0;

  constructor(readonly capacity: number) {
    const bits = Math.max(64, Math.ceil(Math.max(1, capacity) * KeyHashFilter.BITS_PER_KEY));
    this.words = new Uint32Array(Math.ceil(bits / 32));
    this.bitCount = this.words.length * 32;
  }

  add(keyHash: string): void {
    for (let i = 0; i < KeyHashFilter.K; i += 1) {
      const bit = slice(keyHash, i) % this.bitCount;
      this.words[bit >>> 5] |= 1 << (bit & 31);
    }
    this.added += 1;
  }

  /** False: the hash was never added. True: it was, or (about 1 % at capacity) a false positive. */
  mightContain(keyHash: string): boolean {
    for (let i = 0; i < KeyHashFilter.K; i += 1) {
      const bit = slice(keyHash, i) % this.bitCount;
      if ((this.words[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  /** Memory of the bit array. */
  get byteLength(): number {
    return this.words.byteLength;
  }
}

/** The i-th 32-bit slice of a hex hash (characters 8i to 8i + 7), as an unsigned number. */
function slice(hex: string, i: number): number {
  let value = 0;
  for (let j = i * 8, end = j + 8; j < end; j += 1) {
    const c = hex.charCodeAt(j);
    // '0'-'9' → 0-9, 'a'-'f' / 'A'-'F' → 10-15 (anything else only lands on some bit: never an error).
    value = value * 16 + (c <= 57 ? c - 48 : (c | 32) - 87);
  }
  return value;
}

/** Where a rebuild reads every valid key hash (KeyLookupRepository on the consumers database). */
export interface KeyHashSource {
  countValidKeyHashes(): Promise<number>;
  /** Every hash of a key neither revoked nor expired, in pages (never one giant result). */
  validKeyHashPages(pageSize: number): AsyncIterable<string[]>;
}

/** Room for keys issued after a build before the false-positive rate passes 1 % (then it is rebuilt). */
export function filterCapacity(validKeys: number): number {
  return Math.ceil(validKeys * 1.1) + 10_000;
}

/**
 * Hashes per query of a rebuild: 330 KB of text. A page is read and added in one go of the event loop; at 20,000
 * a page (1.3 MB) that go took 35-60 ms with its collections on a gateway held to one core (bench:control-plane,
 * 100,000 keys), long enough to stall every request behind it.
 */
const PAGE_SIZE = 5_000;
const RETRY_MS = 5_000;
const CATCH_UP_MS = 10_000;

/**
 * The set of valid keys of this instance, as a Bloom filter kept current: built from the database at start,
 * every hash a published change names is added at once (a newly issued key is named by its change), and rebuilt
 * from the database periodically (drops revoked and expired keys, resizes), when it has grown past its
 * capacity, and after anything that may have lost keys: a change saying "everything" (a bulk import) or a
 * reconnection of the change channel. Until a rebuild that started after such an event has finished, it is
 * incomplete: it refuses nothing (the caller looks keys up as without a filter). A failed rebuild keeps the
 * previous filter and, if incomplete, is retried every 5 s.
 */
export class KeyFilter {
  private filter?: KeyHashFilter;
  private complete = false;
  /** Bumped by every event after which keys may be missing; a rebuild is complete only if none came during it. */
  private invalidations = 0;
  private running?: Promise<void>;
  private again = false;
  /** Hashes added while a rebuild reads the database: added to the new filter too, before it replaces the old. */
  private addedDuringRebuild?: string[];
  private timer?: NodeJS.Timeout;
  private catchUpTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private failing = false;
  private closed = false;

  constructor(
    private readonly source: KeyHashSource,
    private readonly rebuildMs: number,
    private readonly events: {
      rebuilt(ms: number, keys: number, bytes: number): void;
      failed(error: Error, first: boolean): void;
    },
  ) {}

  /** Builds the filter (awaited at start-up; a failure leaves it incomplete and retried) and starts the timers. */
  async start(): Promise<void> {
    this.timer = setInterval(() => void this.rebuild(), this.rebuildMs);
    this.timer.unref();
    // The change channel subscribes while this first build runs (Redis in the background): one more build soon
    // after catches a key issued in between, instead of waiting for the period.
    this.catchUpTimer = setTimeout(() => void this.rebuild(), Math.min(CATCH_UP_MS, this.rebuildMs));
    this.catchUpTimer.unref();
    await this.rebuild();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.catchUpTimer);
    clearTimeout(this.retryTimer);
  }

  /** True only when the hash is certainly not a valid key: the filter is complete and does not hold it. */
  excludes(keyHash: string): boolean {
    return this.complete && !this.filter!.mightContain(keyHash);
  }

  /** Adds hashes a change names (a new key, or one changed: an extra entry costs nothing but its bits). */
  add(keyHashes: readonly string[]): void {
    if (keyHashes.length === 0) return;
    for (const hash of keyHashes) {
      // A hash it holds already (a change delivered twice, or naming a key twice) is not counted again.
      if (this.filter && !this.filter.mightContain(hash)) this.filter.add(hash);
      this.addedDuringRebuild?.push(hash);
    }
    // Past its capacity the false-positive rate climbs: rebuild at the size of today's keys.
    if (!this.running && this.filter && this.filter.added > this.filter.capacity) void this.rebuild();
  }

  /** Keys may be missing (a change saying "everything", a lost message): refuse nothing until rebuilt. */
  invalidate(): void {
    this.invalidations += 1;
    this.complete = false;
    void this.rebuild();
  }

  /** Rebuilds from the database; a call during a rebuild runs one more after it (it may have read too early). */
  rebuild(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.rebuildLoop().finally(() => (this.running = undefined));
    return this.running;
  }

  get state(): { complete: boolean; keys: number; bytes: number } {
    return { complete: this.complete, keys: this.filter?.added ?? 0, bytes: this.filter?.byteLength ?? 0 };
  }

  private async rebuildLoop(): Promise<void> {
    do {
      this.again = false;
      const invalidations = this.invalidations;
      const started = performance.now();
      this.addedDuringRebuild = [];
      try {
        const next = new KeyHashFilter(filterCapacity(await this.source.countValidKeyHashes()));
        for await (const page of this.source.validKeyHashPages(PAGE_SIZE)) for (const hash of page) next.add(hash);
        // A key committed before the store's page was read is in it already: counted once, so that `added` stays
        // the valid keys plus the changes since (a rebuild overlapping a key's issue counted it twice).
        for (const hash of this.addedDuringRebuild) if (!next.mightContain(hash)) next.add(hash);
        if (this.closed) return;
        this.filter = next;
        if (invalidations === this.invalidations) this.complete = true;
        else this.again = true;
        this.failing = false;
        this.events.rebuilt(performance.now() - started, next.added, next.byteLength);
      } catch (error) {
        if (this.closed) return;
        this.events.failed(error as Error, !this.failing);
        this.failing = true;
        // The previous filter stays; an incomplete one is retried soon (a complete one at the next period).
        if (!this.complete) {
          clearTimeout(this.retryTimer);
          this.retryTimer = setTimeout(() => void this.rebuild(), RETRY_MS);
          this.retryTimer.unref();
        }
        return;
      } finally {
        this.addedDuringRebuild = undefined;
      }
    } while (this.again && !this.closed);
  }
}
