import { Logger } from '@nestjs/common';

/**
 * What changed, for the caches of every gateway instance: the keys (by hash) and consumers (by id) whose cached
 * state is stale, or everything (a bulk import). A newly issued key is named too: it may be cached as unknown.
 * `unbanned` names consumers whose ban and strikes were lifted: each instance forgets them in its own counters.
 */
export interface ConsumerChange {
  keyHashes: string[];
  consumerIds: string[];
  all?: boolean;
  unbanned?: string[];
}

export type ChangeListener = (change: ConsumerChange) => void;

/**
 * Beyond this many hashes a change says "everything"; a message names at most this many unbanned consumers
 * (a NOTIFY payload is limited to 8000 bytes).
 */
export const MAX_NAMED_HASHES = 50;

/** How long an admin change waits for its message to leave (the commit is the truth, the message a hint). */
export const PUBLISH_DEADLINE_MS = 1_000;

/** Between two attempts to send what the channel refused. */
const RETRY_MS = 1_000;

export function normaliseChange(change: ConsumerChange): ConsumerChange {
  const unbanned = change.unbanned?.length ? { unbanned: change.unbanned } : {};
  if (change.all || change.keyHashes.length + change.consumerIds.length > MAX_NAMED_HASHES)
    return { keyHashes: [], consumerIds: [], all: true, ...unbanned };
  return { keyHashes: change.keyHashes, consumerIds: change.consumerIds, ...unbanned };
}

/** One change saying everything both say. */
export function mergeChanges(a: ConsumerChange, b: ConsumerChange): ConsumerChange {
  const union = (x: string[] = [], y: string[] = []) => [...new Set([...x, ...y])];
  return normaliseChange({
    keyHashes: union(a.keyHashes, b.keyHashes),
    consumerIds: union(a.consumerIds, b.consumerIds),
    all: a.all === true || b.all === true,
    unbanned: union(a.unbanned, b.unbanned),
  });
}

export function parseChange(text: string): ConsumerChange | undefined {
  try {
    const value = JSON.parse(text) as Partial<ConsumerChange>;
    const strings = (list: unknown): string[] =>
      Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : [];
    const unbanned = strings(value.unbanned);
    const extra = unbanned.length ? { unbanned } : {};
    if (value.all === true) return { keyHashes: [], consumerIds: [], all: true, ...extra };
    if (!Array.isArray(value.keyHashes) || !Array.isArray(value.consumerIds)) return undefined;
    return { keyHashes: strings(value.keyHashes), consumerIds: strings(value.consumerIds), ...extra };
  } catch {
    return undefined;
  }
}

/** Resolves true when `pending` settles within `ms`, false otherwise (it is not cancelled). */
function settlesWithin(pending: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    pending.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

/**
 * Carries changes to every instance. Each implementation applies a change to its own instance at once (before
 * the admin API answers) and publishes it to the others; `onReconnect` listeners hear that messages may have
 * been missed (the cache then treats every entry as stale). Implementations: in-process (embedded database,
 * one process), Redis pub/sub (REDIS_URL), PostgreSQL LISTEN/NOTIFY (a shared PostgreSQL without Redis).
 *
 * The commit is the truth, the message a hint: `publish` waits at most `deadlineMs` for the message to leave,
 * so that an admin change never hangs on the channel (a Redis that hangs, a NOTIFY that waits). What could not
 * be sent stays queued, merged with later changes, and leaves once the channel takes it (a hung send still
 * completes when the server answers again; a refused one is retried every second). Meanwhile the other
 * instances hold what they cached for at most the cache TTL. One error line per outage, one line when it ends.
 */
export abstract class ConsumerChanges {
  protected readonly logger = new Logger('Consumers');
  private readonly listeners: ChangeListener[] = [];
  private readonly reconnectListeners: Array<() => void> = [];
  /** Not sent yet, and who waits for it. */
  private unsent?: ConsumerChange;
  private waiting: Array<() => void> = [];
  private draining = false;
  private failing = false;
  private stopped = false;
  private resendTimer?: NodeJS.Timeout;
  private wakeResend?: () => void;

  constructor(
    private readonly timing: { deadlineMs: number; retryMs: number } = {
      deadlineMs: PUBLISH_DEADLINE_MS,
      retryMs: RETRY_MS,
    },
  ) {}

  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  /**
   * Applies the change here, then tells the other instances, waiting at most `deadlineMs` for that; a change not
   * sent by then stays queued (see the class). Never throws.
   */
  async publish(change: ConsumerChange): Promise<void> {
    const normalised = normaliseChange(change);
    this.deliver(normalised);
    const sent = new Promise<void>((resolve) => {
      this.unsent = this.unsent ? mergeChanges(this.unsent, normalised) : normalised;
      this.waiting.push(resolve);
    });
    void this.drain();
    if (!(await settlesWithin(sent, this.timing.deadlineMs)))
      this.reportUnsent(`not sent within ${this.timing.deadlineMs} ms`);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.resendTimer);
    this.wakeResend?.();
  }

  /** Sends one message to the other instances; rejects when the channel refuses it. */
  protected abstract broadcast(change: ConsumerChange): Promise<void>;

  protected deliver(change: ConsumerChange): void {
    for (const listener of this.listeners) listener(change);
  }

  protected reconnected(): void {
    for (const listener of this.reconnectListeners) listener();
  }

  /** Sends what is queued, one message at a time, until nothing is left (or the instance closes). */
  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.unsent && !this.stopped) {
        const { message, waiters } = this.nextMessage();
        try {
          await this.broadcast(message);
          for (const resolve of waiters) resolve();
          this.reportSent();
        } catch (error) {
          this.unsent = this.unsent ? mergeChanges(message, this.unsent) : message;
          this.waiting = [...waiters, ...this.waiting];
          this.reportUnsent((error as Error).message);
          await new Promise<void>((resolve) => {
            this.wakeResend = resolve;
            this.resendTimer = setTimeout(resolve, this.timing.retryMs);
            this.resendTimer.unref();
          });
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** The next message: everything queued, except unbanned names beyond MAX_NAMED_HASHES (they go in the next one). */
  private nextMessage(): { message: ConsumerChange; waiters: Array<() => void> } {
    const queued = this.unsent!;
    const unbanned = queued.unbanned ?? [];
    if (unbanned.length > MAX_NAMED_HASHES) {
      this.unsent = { keyHashes: [], consumerIds: [], unbanned: unbanned.slice(MAX_NAMED_HASHES) };
      return { message: { ...queued, unbanned: unbanned.slice(0, MAX_NAMED_HASHES) }, waiters: [] };
    }
    const waiters = this.waiting;
    this.unsent = undefined;
    this.waiting = [];
    return { message: queued, waiters };
  }

  private reportUnsent(reason: string): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.error(
      `Cannot publish consumer changes to the other instances (${reason}): they are committed, and answered; the others see them when the channel is back, or within the key cache TTL`,
    );
  }

  private reportSent(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.warn('Consumer changes reach the other instances again');
  }
}

/** The embedded database belongs to one process: nobody else to tell. */
export class LocalConsumerChanges extends ConsumerChanges {
  protected async broadcast(): Promise<void> {}
}
