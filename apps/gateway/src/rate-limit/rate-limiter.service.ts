import { ApiError } from '@app/errors';
import { recordEdgeOutcome } from '@app/platform/tracing/edge-outcome';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { Response } from 'express';
import { Consumer } from '../consumers/consumer';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { rateLimitHeaders } from './rate-limit-headers';
import { RateLimitMetrics } from './rate-limit-metrics';
import { ClientAddressResolver } from './client-address';
import { BanPolicy, Decision, RateLimitStore, RateLimitUnavailableError, WindowSpec } from './rate-limit-store';

/** Who is counted: a consumer by name, or an unauthenticated client by address. */
export interface Subject {
  tracker: string;
  /** For logs and metrics: consumer name and plan, never a key. */
  name: string;
  plan: string;
  windows: WindowSpec[];
}

@Injectable()
export class RateLimiter {
  private readonly logger = new Logger('RateLimit');
  private readonly ban: BanPolicy;

  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
    private readonly metrics: RateLimitMetrics,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly addresses: ClientAddressResolver,
  ) {
    const { banThreshold, banDurationMs, banGraceMs } = config.rateLimit;
    this.ban = { threshold: banThreshold, durationMs: banDurationMs, graceMs: banGraceMs };
  }

  /** A consumer's windows: its plan's (or its own) per-minute and per-day limits. */
  forConsumer(consumer: Consumer): Subject {
    const { minute, day } = this.config.rateLimit.windowMs;
    return {
      tracker: `consumer:${consumer.name}`,
      name: consumer.name,
      plan: consumer.plan,
      windows: [
        { name: 'minute', limit: consumer.limits.perMinute, ttlMs: minute },
        { name: 'day', limit: consumer.limits.perDay, ttlMs: day },
      ],
    };
  }

  /**
   * Requests without a valid key share a per-address limit, so guessing keys is throttled too. The address is
   * the one a trusted proxy appended, else the socket's (see client-address.ts); IPv6 counts by /64.
   */
  forAnonymous(request: Pick<IncomingMessage, 'headers' | 'socket'>): Subject {
    const address = this.addresses.resolve(request);
    return {
      tracker: `anonymous:${address}`,
      name: `anonymous ${address}`,
      plan: 'anonymous',
      windows: [{ name: 'minute', limit: this.config.rateLimit.anonymousPerMinute, ttlMs: this.config.rateLimit.windowMs.minute }],
    };
  }

  /** Counts the request, sets the rate-limit headers on the response, and throws the 429 when refused. */
  async enforce(subject: Subject, response: Response): Promise<void> {
    const decision = await this.decide(subject);
    recordEdgeOutcome({ plan: subject.plan, rateLimit: decision });
    const headers = rateLimitHeaders(decision, this.clock.now());
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    if (decision.outcome === 'allowed') return;

    const retryAfter = headers['Retry-After'];
    if (decision.outcome === 'unavailable') {
      throw new ApiError('SERVICE_UNAVAILABLE', `Rate limiting is temporarily unavailable: retry after ${retryAfter} seconds.`);
    }
    if (decision.outcome === 'banned') {
      this.metrics.countBanned(subject.plan);
      this.logger.warn(`Banned: ${subject.name} (plan ${subject.plan}), ${retryAfter}s left`);
      throw new ApiError(
        'KEY_BANNED',
        `Temporarily banned for sending on after rate-limit refusals: retry after ${retryAfter} seconds.`,
      );
    }
    this.metrics.countLimited(subject.plan);
    this.logger.warn(`Rate limited: ${subject.name} (plan ${subject.plan}), ${decision.window} window`);
    throw new ApiError(
      'RATE_LIMITED',
      `Rate limit of the ${decision.window} window exceeded: retry after ${retryAfter} seconds.`,
    );
  }

  /** The store's decision; when it cannot take one, a refusal for now (never an admission on a guess). */
  private async decide(subject: Subject): Promise<Decision> {
    try {
      return await this.store.consume(subject.tracker, subject.windows, this.ban);
    } catch (error) {
      if (!(error instanceof RateLimitUnavailableError)) throw error;
      const windows = subject.windows.map((spec) => ({ ...spec, count: 0, resetMs: spec.ttlMs }));
      return { outcome: 'unavailable', windows, retryAfterMs: error.retryAfterMs };
    }
  }
}
