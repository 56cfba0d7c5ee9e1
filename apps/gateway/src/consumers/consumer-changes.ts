/**
 * What changed, for the caches of every gateway instance: the keys (by hash) and consumers (by id) whose cached
 * state is stale, or everything (a bulk import). A newly issued key is named too: it may be cached as unknown.
 */
export interface ConsumerChange {
  keyHashes: string[];
  consumerIds: string[];
  all?: boolean;
}

export type ChangeListener = (change: ConsumerChange) => void;

/** Beyond this many hashes a change says "everything" (a NOTIFY payload is limited to 8000 bytes). */
export const MAX_NAMED_HASHES = 50;

export function normaliseChange(change: ConsumerChange): ConsumerChange {
  return change.keyHashes.length + change.consumerIds.length > MAX_NAMED_HASHES ? { keyHashes: [], consumerIds: [], all: true } : change;
}

export function parseChange(text: string): ConsumerChange | undefined {
  try {
    const value = JSON.parse(text) as Partial<ConsumerChange>;
    if (value.all === true) return { keyHashes: [], consumerIds: [], all: true };
    if (!Array.isArray(value.keyHashes) || !Array.isArray(value.consumerIds)) return undefined;
    return {
      keyHashes: value.keyHashes.filter((h): h is string => typeof h === 'string'),
      consumerIds: value.consumerIds.filter((id): id is string => typeof id === 'string'),
    };
  } catch {
    return undefined;
  }
}

/**
 * Carries changes to every instance. Each implementation applies a change to its own instance at once (before
 * the admin API answers) and publishes it to the others; `onReconnect` listeners hear that messages may have
 * been missed (the cache then treats every entry as stale). Implementations: in-process (embedded database,
 * one process), Redis pub/sub (REDIS_URL), PostgreSQL LISTEN/NOTIFY (a shared PostgreSQL without Redis).
 */
export abstract class ConsumerChanges {
  private readonly listeners: ChangeListener[] = [];
  private readonly reconnectListeners: Array<() => void> = [];

  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  /** Applies the change here, then tells the other instances; a failure to tell them is logged, never thrown. */
  async publish(change: ConsumerChange): Promise<void> {
    const normalised = normaliseChange(change);
    this.deliver(normalised);
    await this.broadcast(normalised);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {}

  protected abstract broadcast(change: ConsumerChange): Promise<void>;

  protected deliver(change: ConsumerChange): void {
    for (const listener of this.listeners) listener(change);
  }

  protected reconnected(): void {
    for (const listener of this.reconnectListeners) listener();
  }
}

/** The embedded database belongs to one process: nobody else to tell. */
export class LocalConsumerChanges extends ConsumerChanges {
  protected async broadcast(): Promise<void> {}
}
