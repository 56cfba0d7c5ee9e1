import { Logger } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import { createRedisConnection, RedisConnectionConfig } from '../redis/redis-connection';

/**
 * "Write the credit spend you hold now": what a rebuild of a lost balance asks of every instance that shares the
 * counters (docs/billing.md), so that its barrier is acknowledged in milliseconds rather than at each instance's
 * next periodic flush. A hint only: an instance that misses it still acknowledges at its next flush.
 */
export abstract class CreditFlushRequests {
  /** Whether other instances share the balances (and so must acknowledge a rebuild's barrier). */
  abstract readonly fleetWide: boolean;
  private listener?: (barrier: number) => void;

  /** Where requests from other instances are delivered (one listener: the instance's CreditsService). */
  onRequest(listener: (barrier: number) => void): void {
    this.listener = listener;
  }

  protected deliver(barrier: number): void {
    this.listener?.(barrier);
  }

  /** Asks every instance to flush through `barrier`; never throws (the periodic flush is the safety net). */
  abstract request(barrier: number): Promise<void>;

  abstract close(): Promise<void>;
}

/** In-process counters: each instance holds its own balances, so a rebuild waits for no one else. */
export class LocalCreditFlushRequests extends CreditFlushRequests {
  readonly fleetWide = false;

  async request(): Promise<void> {}

  async close(): Promise<void> {}
}

/**
 * Over Redis pub/sub, on a channel under the key prefix, with connections of its own (a subscribed connection
 * cannot publish; the publisher has no offline queue, so a request while Redis is away fails at once).
 */
export class RedisCreditFlushRequests extends CreditFlushRequests {
  readonly fleetWide = true;
  private readonly logger = new Logger('Credits');
  private readonly subscriber: Redis | Cluster;
  private readonly publisher: Redis | Cluster;
  private readonly channel: string;

  constructor(connection: RedisConnectionConfig, keyPrefix: string) {
    super();
    this.channel = `${keyPrefix}credits:flush`;
    this.publisher = createRedisConnection(connection, 'commands');
    this.publisher.on('error', () => undefined);
    this.subscriber = createRedisConnection(connection, 'subscriber');
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, message: string) => {
      const barrier = Number(message);
      if (channel === this.channel && Number.isSafeInteger(barrier) && barrier > 0) this.deliver(barrier);
    });
    this.subscriber
      .subscribe(this.channel)
      .catch((error: Error) =>
        this.logger.warn(
          `Cannot subscribe to ${this.channel} (${error.message}): spend is flushed on the interval only`,
        ),
      );
  }

  async request(barrier: number): Promise<void> {
    await this.publisher.publish(this.channel, String(barrier)).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
