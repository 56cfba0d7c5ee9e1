import type { Cluster, Redis } from 'ioredis';
import { createRedisConnection, RedisConnectionConfig } from '../redis/redis-connection';
import { ConsumerChange, ConsumerChanges, parseChange } from './consumer-changes';

/**
 * Changes over Redis pub/sub (the same Redis, Cluster or Sentinel-managed primary as the counters, through the
 * one connection factory): one channel under the key prefix, a subscriber connection of its own
 * (a subscribed connection cannot publish). Pub/sub keeps nothing for a disconnected subscriber, so after a
 * reconnection every cached entry is treated as stale; the cache's TTL bounds staleness meanwhile.
 */
export class RedisConsumerChanges extends ConsumerChanges {
  private readonly publisher: Redis | Cluster;
  private readonly subscriber: Redis | Cluster;
  private readonly channel: string;
  private subscribedOnce = false;

  constructor(connection: RedisConnectionConfig, keyPrefix: string) {
    super();
    this.channel = `${keyPrefix}consumers:changes`;
    // A publish fails fast while Redis is gone (ConsumerChanges retries it, the cache TTL is the safety net);
    // the subscriber queues and subscribes again after every reconnect or failover.
    this.publisher = createRedisConnection(connection, 'commands');
    this.subscriber = createRedisConnection(connection, 'subscriber');
    this.publisher.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const change = parseChange(message);
      if (change) this.deliver(change);
    });
    // ioredis resubscribes by itself after a reconnection; what was published meanwhile is lost.
    this.subscriber.on('ready', () => {
      if (this.subscribedOnce) {
        this.logger.warn('Redis change channel reconnected: cached keys are re-checked on their next use');
        this.reconnected();
      }
    });
  }

  /** Not awaited: a gateway whose Redis is down still starts (ioredis subscribes once it connects). */
  override async start(): Promise<void> {
    this.subscriber.subscribe(this.channel).then(
      () => {
        this.subscribedOnce = true;
      },
      (error: Error) => {
        this.subscribedOnce = true;
        this.logger.error(
          `Cannot subscribe to ${this.channel} (${error.message}): changes reach this instance through the cache TTL`,
        );
      },
    );
  }

  /** Fails at once while Redis is gone (no offline queue); waits while it hangs (sent when it answers again). */
  protected async broadcast(change: ConsumerChange): Promise<void> {
    await this.publisher.publish(this.channel, JSON.stringify(change));
  }

  override async close(): Promise<void> {
    await super.close();
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
