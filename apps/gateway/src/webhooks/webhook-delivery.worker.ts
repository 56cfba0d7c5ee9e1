import { Mailer } from '@app/mail';
import { OutboundClient, signWebhook } from '@app/outbound';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { mailOf, webhookIdOf } from './webhook-events';
import { AttemptOutcome, ClaimedDelivery, WebhookDeliveriesRepository } from './webhook-deliveries.repository';

/** How long a claim outlives an attempt's deadline before another instance may take the delivery over. */
const LEASE_MARGIN_MS = 60_000;

/**
 * Sends the deliveries (docs/webhooks.md), on every instance, every WEBHOOK_POLL_MS: fans new outbox messages out,
 * claims what is due (at most WEBHOOK_CONCURRENCY attempts in flight on this instance, one per endpoint across
 * the fleet), and sends each outside any transaction through OutboundClient (its deadline and size cap), signed
 * with the endpoint's secret, the message's id as `webhook-id`; then records the attempt. A round does not wait
 * for its sends: a slow endpoint holds one slot, never the next round nor another endpoint. Off the request path.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private timer?: NodeJS.Timeout;
  private running = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly outbound: OutboundClient,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.webhooks.enabled) return;
    this.timer = setInterval(() => void this.tick(), this.config.webhooks.pollMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.settled();
    this.mailer.close();
  }

  /** One round unless one is running: errors are logged (a database away: the next round tries again). */
  private async tick(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      await this.runOnce();
    } catch (error) {
      this.logger.error(`A delivery round failed: ${(error as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  /** Fans out, claims and starts the attempts the free slots allow; answers how many it started. */
  async runOnce(): Promise<number> {
    const { concurrency, timeoutMs } = this.config.webhooks;
    await this.deliveries.fanOut(this.clock.now());
    const free = concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const now = this.clock.now();
    const claimed = await this.deliveries.claim(now, free, now + timeoutMs + LEASE_MARGIN_MS);
    for (const delivery of claimed) {
      const attempt: Promise<void> = this.attempt(delivery)
        .catch((error: Error) => this.logger.error(`Delivery ${delivery.id} not recorded: ${error.message}`))
        .finally(() => this.inFlight.delete(attempt));
      this.inFlight.add(attempt);
    }
    return claimed.length;
  }

  /** Resolves when every attempt started so far has been recorded. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const outcome = delivery.endpoint ? await this.post(delivery) : await this.mail(delivery);
    const recorded = await this.deliveries.recordAttempt(
      delivery,
      outcome,
      this.clock.now(),
      this.config.webhooks.disableAfterMs,
    );
    if (recorded.endpointDisabled)
      this.logger.warn(`Webhook endpoint ${delivery.endpoint!.id} of ${delivery.consumer} disabled: failing too long.`);
  }

  private async post(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const { url, secrets } = delivery.endpoint!;
    const payload = JSON.stringify(delivery.payload);
    const headers = signWebhook(secrets, {
      id: webhookIdOf(delivery.messageId),
      timestamp: new Date(this.clock.now()),
      payload,
    });
    const result = await this.outbound.send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: payload,
      timeoutMs: this.config.webhooks.timeoutMs,
    });
    if (result.kind === 'response') {
      const ok = result.status >= 200 && result.status < 300;
      return { ok, status: result.status, error: ok ? null : `HTTP ${result.status}`, latencyMs: result.latencyMs };
    }
    return { ok: false, status: null, error: `${result.kind}: ${result.message}`, latencyMs: result.latencyMs };
  }

  private async mail(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const started = performance.now();
    try {
      await this.mailer.send({ to: delivery.email!, ...mailOf(delivery.kind, delivery.payload) });
      return { ok: true, status: null, error: null, latencyMs: performance.now() - started };
    } catch (error) {
      return {
        ok: false,
        status: null,
        error: `mail: ${(error as Error).message}`,
        latencyMs: performance.now() - started,
      };
    }
  }
}
