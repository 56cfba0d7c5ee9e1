import { ApiError } from '@app/errors';
import { recordEdgeOutcome } from '@app/platform/tracing/edge-outcome';
import { ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  ThrottlerModuleOptions,
  ThrottlerOptions,
} from '@nestjs/throttler';
import type { ThrottlerRequest } from '@nestjs/throttler';
import { monthWindowOf } from '../periods/month-window';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { CreditsService } from '../credits/credits.service';
import { ThresholdEvents } from '../alerts/threshold-events';
import { CREDITS_POLICY } from '../credits/credit-decision';
import { operationIdOf, THROTTLER_METADATA_PREFIX, THROTTLER_SKIP_DEFAULT } from '../nest-internals';
import { exchangeOf } from '../routing/api-exchange';
import { rateLimitHeaders } from './rate-limit-headers';
import { RateLimitMetrics } from './rate-limit-metrics';
import { BanPolicy, Decision, RateLimitStore, RateLimitUnavailableError, WindowSpec } from './rate-limit-store';
import type { CreditSpec } from '../credits/credit-decision';

/** What the throttlers resolved for one request, collected before the one store call. */
interface Pending {
  tracker?: string;
  windows: WindowSpec[];
}

/** The windows being collected, per decision in progress (the package calls handleRequest with the context only). */
const pendingByContext = new WeakMap<ExecutionContext, Pending>();

/**
 * The card's ThrottlerGuard, keyed by plan. @nestjs/throttler resolves what applies to a request, as it does for
 * any Nest app: the named throttlers (`minute`, `day`) with limits from the caller's plan (plan-throttlers.ts),
 * `@SkipThrottle()` and `@Throttle()` on a controller or route, the tracker (consumer, or client address). What is
 * overridden is the request handling, as the package documents: instead of one storage call per throttler, the
 * windows are collected and decided in ONE atomic store call (every window has room or none is counted, and the
 * ban), so limits stay exact across instances; the refusal is the spec's 429 (or KEY_BANNED) with the
 * X-RateLimit-* and Retry-After headers of all windows together.
 *
 * A route's own `@Throttle({ minute: { limit: 10 } })` adds a window of that route alone (counted under the same
 * tracker, named `<handler>-minute`) on top of the plan's: a route can be held tighter than the plan, never
 * looser, and the plan's windows still count every request.
 *
 * Every `/v1` request is decided exactly once, by the pipeline (apps/gateway/src/pipeline), after authentication
 * and before anything is forwarded: `decide()` is the only place a request is counted. The consumer comes from
 * the request's ApiExchange (the context's third argument); without one, the request is counted by address.
 * It is not a global guard: Nest's router serves no /v1 request, and ApiKeyGuard refuses everything else that
 * is not @Public().
 */
@Injectable()
export class PlanThrottlerGuard extends ThrottlerGuard {
  private readonly log = new Logger('RateLimit');
  private readonly ban: BanPolicy;
  /** Whether a handler (or its controller) carries @Throttle/@SkipThrottle: read once per handler. */
  private readonly metadataByHandler = new WeakMap<object, boolean>();
  /** A handler's operationId (what a request costs in credits is per operation): read once per handler. */
  private readonly operationByHandler = new WeakMap<object, string | null>();

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() private readonly store: RateLimitStore,
    reflector: Reflector,
    private readonly clock: Clock,
    private readonly metrics: RateLimitMetrics,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly credits: CreditsService,
    private readonly thresholds: ThresholdEvents,
  ) {
    super(options, store, reflector);
    const { banThreshold, banDurationMs, banGraceMs } = config.rateLimit;
    this.ban = { threshold: banThreshold, durationMs: banDurationMs, graceMs: banGraceMs };
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    await this.decide(context);
    return true;
  }

  /**
   * Counts the request in every window that applies to it and sets the rate-limit headers; throws the 429 (or
   * the 503 when no decision can be taken).
   */
  async decide(context: ExecutionContext): Promise<void> {
    const exchange = exchangeOf(context);
    const consumer = exchange?.consumer;
    const pending: Pending = { windows: [] };
    if (this.routeHasThrottlerMetadata(context)) {
      pendingByContext.set(context, pending);
      try {
        await super.canActivate(context);
      } finally {
        pendingByContext.delete(context);
      }
    } else {
      await this.planWindowsOnly(context, pending);
    }
    if (pending.tracker === undefined || pending.windows.length === 0) return;
    // A monthly quota is decided in the same call: it is the consumer's billing, not a throttler of the route.
    const now = this.clock.now();
    const month = consumer && monthWindowOf(consumer, now);
    if (month) pending.windows.push(month);
    // Credits too (docs/billing.md): the request's cost and any refill due, in the same store call.
    const credits = consumer?.credits && this.credits.specOf(consumer, this.operationOf(context), now);

    const plan = consumer?.plan ?? 'anonymous';
    const decision = await this.consume(pending.tracker, pending.windows, credits);
    if (decision.credits) {
      const spent = this.credits.afterDecision(consumer!.name, decision.outcome === 'allowed', decision.credits, now);
      if (exchange) exchange.creditsSpent = spent;
    }
    // Thresholds of the long windows and the balance (docs/alerts.md): a few comparisons, queued only when crossed.
    if (consumer) this.thresholds.observe(consumer, decision, now);
    recordEdgeOutcome({ plan, rateLimit: decision });
    // The decision's own moment: the month's end and the next refill were counted from it, so their instants in the
    // headers are exact (the same Unix second on every answer of one period), not a millisecond later.
    const headers = rateLimitHeaders(decision, now);
    if (exchange) for (const name in headers) exchange.setHeader(name, headers[name]);
    else {
      const { res } = this.getRequestResponse(context);
      for (const name in headers) this.setResponseHeader(res, name, headers[name]);
    }
    if (decision.outcome !== 'allowed')
      this.refuse(decision, plan, consumer?.name ?? pending.tracker, headers['Retry-After']);
  }

  /**
   * `@SkipThrottle()` skips every throttler: the package's bare decorator names only the `default` throttler,
   * and this guard has two named ones (`@SkipThrottle({ day: true })` still skips one).
   */
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return (
      this.reflector.getAllAndOverride<boolean>(THROTTLER_SKIP_DEFAULT, [context.getHandler(), context.getClass()]) ===
      true
    );
  }

  /** Called by ThrottlerGuard once per throttler that applies: collects the window instead of counting it. */
  protected override async handleRequest({
    context,
    limit,
    ttl,
    throttler,
    getTracker,
    generateKey,
  }: ThrottlerRequest): Promise<boolean> {
    const { req } = this.getRequestResponse(context);
    const pending = pendingByContext.get(context);
    if (pending === undefined) throw new Error('PlanThrottlerGuard.handleRequest runs only inside decide()');
    const tracker = await getTracker(req, context);
    pending.tracker ??= generateKey(context, tracker, throttler.name!);
    const planLimit = await this.planValue(throttler.limit, context);
    const planTtl = await this.planValue(throttler.ttl, context);
    pending.windows.push({ name: throttler.name!, limit: planLimit, ttlMs: planTtl });
    if (limit !== planLimit || ttl !== planTtl)
      pending.windows.push({ name: `${context.getHandler().name}-${throttler.name}`, limit, ttlMs: ttl });
    return true;
  }

  /**
   * A route with no @Throttle/@SkipThrottle (on it or its controller) gets exactly the plan's windows: the same
   * throttlers, skipIf, limits and tracker that ThrottlerGuard.canActivate would resolve, without its ten
   * metadata reads per request (about 5 µs of the guard's 14; docs/benchmarks.md). Routes with metadata take
   * the package's own resolution.
   */
  private async planWindowsOnly(context: ExecutionContext, pending: Pending): Promise<void> {
    const { req } = this.getRequestResponse(context);
    for (const throttler of this.throttlers) {
      if ((throttler.skipIf ?? this.commonOptions.skipIf)?.(context)) continue;
      const getTracker = throttler.getTracker ?? this.commonOptions.getTracker!;
      const generateKey = throttler.generateKey ?? this.commonOptions.generateKey!;
      // The package allows promises here; ours are plain values, awaited only when they are not (an await of
      // a value still costs a promise and a microtask: 4-6 per request, ~5 % of the gateway's allocations).
      if (pending.tracker === undefined) {
        const tracker = getTracker(req, context);
        pending.tracker = generateKey(context, typeof tracker === 'string' ? tracker : await tracker, throttler.name!);
      }
      const limit = this.planValue(throttler.limit, context);
      const ttl = this.planValue(throttler.ttl, context);
      pending.windows.push({
        name: throttler.name!,
        limit: typeof limit === 'number' ? limit : await limit,
        ttlMs: typeof ttl === 'number' ? ttl : await ttl,
      });
    }
  }

  private operationOf(context: ExecutionContext): string | undefined {
    const handler = context.getHandler();
    if (handler === undefined) return undefined;
    let operation = this.operationByHandler.get(handler);
    if (operation === undefined) {
      operation = operationIdOf(handler) ?? null;
      this.operationByHandler.set(handler, operation);
    }
    return operation ?? undefined;
  }

  private routeHasThrottlerMetadata(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let has = this.metadataByHandler.get(handler);
    if (has === undefined) {
      const keys = [...Reflect.getMetadataKeys(handler), ...Reflect.getMetadataKeys(context.getClass())];
      has = keys.some((key) => typeof key === 'string' && key.startsWith(THROTTLER_METADATA_PREFIX));
      this.metadataByHandler.set(handler, has);
    }
    return has;
  }

  /** A throttler's limit or ttl for this request: a number when its resolver gives one, else a promise of it. */
  private planValue(value: ThrottlerOptions['limit'], context: ExecutionContext): number | Promise<number> {
    if (typeof value !== 'function') return value;
    const resolved = value(context);
    return typeof resolved === 'number' ? resolved : Promise.resolve(resolved).then(Number);
  }

  /** The store's decision; when it cannot take one, a refusal for now (never an admission on a guess). */
  private async consume(tracker: string, windows: WindowSpec[], credits: CreditSpec | undefined): Promise<Decision> {
    try {
      return await this.store.consume(tracker, windows, this.ban, credits);
    } catch (error) {
      if (!(error instanceof RateLimitUnavailableError)) throw error;
      return {
        outcome: 'unavailable',
        windows: windows.map((spec) => ({ ...spec, count: 0, resetMs: spec.ttlMs })),
        retryAfterMs: error.retryAfterMs,
      };
    }
  }

  private refuse(
    decision: Exclude<Decision, { outcome: 'allowed' }>,
    plan: string,
    who: string,
    retryAfter: string,
  ): never {
    if (decision.outcome === 'exhausted') {
      this.metrics.countLimited(plan);
      this.log.warn(`Credits exhausted: ${who} (plan ${plan})`);
      throw new ApiError(
        'CREDITS_EXHAUSTED',
        `The credit balance (${decision.credits?.balance ?? 0}) does not cover this request's cost (${decision.credits?.cost ?? 1}) and no scheduled refill covers it: a top-up is needed.`,
      );
    }
    if (decision.outcome === 'unavailable') {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        `Rate limiting is temporarily unavailable: retry after ${retryAfter} seconds.`,
      );
    }
    if (decision.outcome === 'banned') {
      // One ban, one count and one line: the requests it refuses afterwards are neither.
      if (decision.started) {
        this.metrics.countBanned(plan);
        this.log.warn(`Banned: ${who} (plan ${plan}) for ${retryAfter}s`);
      }
      throw new ApiError(
        'KEY_BANNED',
        `Temporarily banned for sending on after rate-limit refusals: retry after ${retryAfter} seconds.`,
      );
    }
    this.metrics.countLimited(plan);
    this.log.warn(`Rate limited: ${who} (plan ${plan}), ${decision.window} policy`);
    throw new ApiError(
      'RATE_LIMITED',
      decision.window === CREDITS_POLICY
        ? `The credit balance does not cover this request's cost: retry after the refill in ${retryAfter} seconds.`
        : `Rate limit of the ${decision.window} window exceeded: retry after ${retryAfter} seconds.`,
    );
  }
}
