import type { ExecutionContext } from '@nestjs/common';
import type { ThrottlerModuleOptions } from '@nestjs/throttler';
import type { IncomingMessage } from 'node:http';
import { monthWindowOf } from '../periods/month-window';
import type { GatewayConfig } from '../config/gateway.config';
import type { Consumer } from '../consumers/consumer';
import { exchangeOf } from '../routing/api-exchange';
import { ClientAddressResolver } from './client-address';
import type { WindowSpec } from './rate-limit-store';

/** The request as the throttlers read it: its address counts when no consumer was authenticated. */
type ThrottledRequest = Pick<IncomingMessage, 'headers' | 'socket'>;

/** The consumer the pipeline authenticated for the request of `context` (its ApiExchange), if any. */
const consumerOf = (context: ExecutionContext): Consumer | undefined => exchangeOf(context)?.consumer;

export const consumerTracker = (name: string): string => `consumer:${name}`;

/** The tracker a request is counted under: the consumer by name, or a client without a valid key by address. */
export function trackerOf(
  request: ThrottledRequest,
  consumer: Consumer | undefined,
  addresses: ClientAddressResolver,
): string {
  return consumer ? consumerTracker(consumer.name) : `anonymous:${addresses.resolve(request)}`;
}

/**
 * A consumer's plan windows, as the throttlers resolve them, and its monthly quota's window if it has one, as
 * PlanThrottlerGuard adds it (the admin API's usage reads the same).
 */
export function consumerWindows(consumer: Consumer, config: GatewayConfig, nowMs: number): WindowSpec[] {
  const { minute, day } = config.rateLimit.windowMs;
  const windows: WindowSpec[] = [
    { name: 'minute', limit: consumer.limits.perMinute, ttlMs: minute },
    { name: 'day', limit: consumer.limits.perDay, ttlMs: day },
  ];
  const month = monthWindowOf(consumer, nowMs);
  if (month) windows.push(month);
  return windows;
}

/**
 * ThrottlerModule's configuration: two named throttlers, `minute` and `day`, whose limits are the caller's plan
 * (or its own agreed limits), resolved per request from the authenticated consumer. A request without a valid
 * key is counted by address at the anonymous per-minute limit and has no day window. The key of every plan
 * window is the tracker itself: a consumer's limits hold across every route and every one of its keys.
 */
export function planThrottlerOptions(config: GatewayConfig, addresses: ClientAddressResolver): ThrottlerModuleOptions {
  const { minute, day } = config.rateLimit.windowMs;
  return {
    throttlers: [
      {
        name: 'minute',
        ttl: minute,
        limit: (context) => consumerOf(context)?.limits.perMinute ?? config.rateLimit.anonymousPerMinute,
      },
      {
        name: 'day',
        ttl: day,
        limit: (context) => consumerOf(context)?.limits.perDay ?? 0,
        skipIf: (context) => consumerOf(context) === undefined,
      },
    ],
    getTracker: (request, context) => trackerOf(request as ThrottledRequest, consumerOf(context), addresses),
    generateKey: (_context, tracker) => tracker,
    // PlanThrottlerGuard writes the spec's headers for all windows together.
    setHeaders: false,
  };
}
