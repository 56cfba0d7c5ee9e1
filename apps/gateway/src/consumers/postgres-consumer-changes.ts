import { Client } from 'pg';
import { ConsumerChange, ConsumerChanges, parseChange } from './consumer-changes';

/**
 * Changes over PostgreSQL LISTEN/NOTIFY (a shared PostgreSQL without REDIS_URL): a listening connection of its
 * own, reconnected with a back-off when it drops; after a reconnection every cached entry is treated as stale
 * (NOTIFY keeps nothing for an absent listener). Publishing goes through `notify` (the store's pool).
 */
export class PostgresConsumerChanges extends ConsumerChanges {
  private listener?: Client;
  private closed = false;
  private retryTimer?: NodeJS.Timeout;
  private connectedOnce = false;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly notify: (channel: string, payload: string) => Promise<void>,
  ) {
    super();
  }

  override async start(): Promise<void> {
    await this.connect(0);
  }

  protected async broadcast(change: ConsumerChange): Promise<void> {
    await this.notify(this.channel, JSON.stringify(change));
  }

  override async close(): Promise<void> {
    await super.close();
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.listener?.end().catch(() => undefined);
  }

  private async connect(attempt: number): Promise<void> {
    if (this.closed) return;
    const client = new Client({
      connectionString: this.url,
      application_name: 'gateway-consumer-changes',
      connectionTimeoutMillis: 3000,
    });
    client.on('error', () => undefined);
    client.on('notification', (message) => {
      if (message.channel !== this.channel || !message.payload) return;
      const change = parseChange(message.payload);
      if (change) this.deliver(change);
    });
    client.on('end', () => {
      if (this.closed || this.listener !== client) return;
      this.listener = undefined;
      this.logger.error('Lost the LISTEN connection for consumer changes: reconnecting');
      this.schedule(1);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
      this.listener = client;
      if (this.connectedOnce) {
        this.logger.warn(
          'LISTEN connection for consumer changes is back: cached keys are re-checked on their next use',
        );
        this.reconnected();
      }
      this.connectedOnce = true;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (attempt === 0)
        this.logger.error(`Cannot LISTEN for consumer changes (${(error as Error).message}): retrying`);
      this.connectedOnce = true;
      this.schedule(attempt + 1);
    }
  }

  private schedule(attempt: number): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => void this.connect(attempt), Math.min(attempt * 500, 5000));
    this.retryTimer.unref();
  }
}
