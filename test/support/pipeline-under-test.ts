import { AppMetrics, createAppLogger, PinoLoggerService } from '@app/platform';
import { INestApplication, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ThrottlerModule } from '@nestjs/throttler';
import { join } from 'node:path';
import { ApiKeyAuthenticator } from '../../apps/gateway/src/auth/api-key-authenticator';
import { CreditsService } from '../../apps/gateway/src/credits/credits.service';
import { ThresholdEvents } from '../../apps/gateway/src/alerts/threshold-events';
import type { CreditSpec } from '../../apps/gateway/src/credits/credit-decision';
import type { CreditTerms } from '../../apps/gateway/src/plans/plan-limits';
import { Clock } from '../../apps/gateway/src/clock';
import { GATEWAY_CONFIG, GatewayConfig, loadGatewayConfig } from '../../apps/gateway/src/config/gateway.config';
import { generateApiKey, hashApiKey } from '../../apps/gateway/src/consumers/api-key';
import type { Consumer } from '../../apps/gateway/src/consumers/consumer';
import { assembleGatewayHttp } from '../../apps/gateway/src/create-gateway-app';
import { Authentication, KeyCache } from '../../apps/gateway/src/keys/key-cache';
import { ApiPipeline } from '../../apps/gateway/src/pipeline/api-pipeline';
import { loadPlans, PLAN_TABLE } from '../../apps/gateway/src/plans/plans';
import { PetsProxyController } from '../../apps/gateway/src/proxy/pets-proxy.controller';
import { UpstreamService } from '../../apps/gateway/src/proxy/upstream.service';
import { ClientAddressResolver } from '../../apps/gateway/src/rate-limit/client-address';
import { TokenCache } from '../../apps/gateway/src/tokens/token-cache';
import { MemoryRateLimitStore } from '../../apps/gateway/src/rate-limit/memory-rate-limit.store';
import { PlanThrottlerGuard } from '../../apps/gateway/src/rate-limit/plan-throttler.guard';
import { planThrottlerOptions } from '../../apps/gateway/src/rate-limit/plan-throttlers';
import { RateLimitMetrics } from '../../apps/gateway/src/rate-limit/rate-limit-metrics';
import { RateLimitStore } from '../../apps/gateway/src/rate-limit/rate-limit-store';
import { RouteTable } from '../../apps/gateway/src/routing/route-table';
import type { ApiExchange } from '../../apps/gateway/src/routing/api-exchange';
import { UsageService } from '../../apps/gateway/src/usage/usage.service';
import { FakeClock } from './fake-clock';

/** What the fake upstream was asked to forward, in order. */
export interface Forwarded {
  method: string;
  path: string;
  consumer?: string;
}

/** What the usage history was given: one entry per answer, with the consumer and the status. */
export interface Tracked {
  consumer?: string;
  status: number;
}

export interface PipelineUnderTest {
  url: string;
  clock: FakeClock;
  /** The counters the pipeline decides with (the in-process store, real). */
  store: MemoryRateLimitStore;
  forwarded: Forwarded[];
  tracked: Tracked[];
  /** Decisions asked of the store, one per counted request. */
  decisions(): number;
  /**
   * A key the fake key cache knows, for a consumer with `limits` and, with `credits`, prepaid credits in force: that
   * balance as the ledger would give it, one credit per request, no refill.
   */
  keyFor(name: string, limits: Consumer['limits'], credits?: number): string;
  /** A key the fake key cache cannot check (as when the key store is away): 'unavailable', Retry-After 5. */
  uncheckableKey(): string;
  close(): Promise<void>;
}

/**
 * The gateway's /v1 pipeline (ApiPipeline) assembled as the gateway assembles it (assembleGatewayHttp: the same
 * HTTP steps, prefix, docs and Host rule), over a module of its real parts (the route table, the API key
 * authenticator, PlanThrottlerGuard on @nestjs/throttler with the in-process counters, the pets routes) and
 * fakes where a database or the pets service would answer: the key cache, the usage history, the
 * credits ledger (a balance per consumer, set by keyFor) and the upstream. No database, no second app: a component, in a few hundred ms.
 */
export async function startPipeline(env: Record<string, string> = {}): Promise<PipelineUnderTest> {
  const config: GatewayConfig = loadGatewayConfig({
    PETS_URL: 'http://127.0.0.1:9',
    LOG_LEVEL: 'error',
    NODE_ENV: 'test',
    METRICS_PORT: '0',
    ADMIN_PORT: '0',
    ADMIN_TOKEN: 'component-test-admin-token-not-used-anywhere',
    ...env,
  });
  const plans = loadPlans(join(__dirname, '../../gateway/plans.json'));
  const clock = new FakeClock();
  const metrics = new AppMetrics('gateway');
  const store = new MemoryRateLimitStore(clock, config.rateLimit.memoryMaxTrackers);
  let decisions = 0;
  const consume = store.consume.bind(store);
  store.consume = (...args: Parameters<typeof store.consume>) => {
    decisions += 1;
    return consume(...args);
  };

  const keys = new Map<string, Consumer>();
  const uncheckable = new Set<string>();
  const keyCache: Pick<KeyCache, 'authenticate'> = {
    authenticate: async (hash: string): Promise<Authentication> => {
      if (uncheckable.has(hash)) return { outcome: 'unavailable', retryAfterS: 5 };
      const consumer = keys.get(hash);
      return consumer
        ? { outcome: 'valid', consumer, keyId: `key-of-${consumer.name}`, addresses: undefined }
        : { outcome: 'invalid', reason: 'unknown' };
    },
  };
  const forwarded: Forwarded[] = [];
  const upstream: Pick<UpstreamService, 'forward'> = {
    forward: async (exchange: ApiExchange, path: string) => {
      forwarded.push({ method: exchange.request.method, path, consumer: exchange.consumer?.name });
      // As UpstreamService writes its answer: the fields the steps set (ApiExchange.headers), then its own.
      exchange.response.writeHead(200, [...exchange.headers, 'content-type', 'application/json']);
      exchange.response.end(JSON.stringify({ data: [] }));
    },
  };
  const tracked: Tracked[] = [];
  const usage: Pick<UsageService, 'track'> = {
    track: (exchange, response) =>
      void response.once('finish', () =>
        tracked.push({ consumer: exchange.consumer?.name, status: response.statusCode }),
      ),
  };
  const ledger = new Map<string, number>();
  const credits: Partial<CreditsService> = {
    settleDecisionsWith: () => undefined,
    specOf: (consumer: Consumer): CreditSpec | undefined =>
      ledger.has(consumer.name)
        ? { cost: 1, rebuild: async () => ({ balance: ledger.get(consumer.name)!, refilledPeriodStartMs: 0 }) }
        : undefined,
    afterDecision: () => 0,
  };
  const addresses = ClientAddressResolver.fromSetting(config.trustProxy);

  @Module({
    imports: [DiscoveryModule, ThrottlerModule.forRoot({ ...planThrottlerOptions(config, addresses), storage: store })],
    controllers: [PetsProxyController],
    providers: [
      ApiPipeline,
      RouteTable,
      ApiKeyAuthenticator,
      PlanThrottlerGuard,
      RateLimitMetrics,
      { provide: GATEWAY_CONFIG, useValue: config },
      { provide: PLAN_TABLE, useValue: plans },
      { provide: Clock, useValue: clock },
      { provide: AppMetrics, useValue: metrics },
      { provide: RateLimitStore, useValue: store },
      { provide: ClientAddressResolver, useValue: addresses },
      { provide: KeyCache, useValue: keyCache },
      // No issuer configured: every bearer is judged as a key.
      { provide: TokenCache, useValue: { enabled: false } },
      { provide: UpstreamService, useValue: upstream },
      { provide: UsageService, useValue: usage },
      { provide: CreditsService, useValue: credits },
      { provide: ThresholdEvents, useValue: { observe: () => undefined } },
    ],
  })
  class PipelineComponents {}

  const logger = createAppLogger('gateway', config.logLevel);
  const moduleRef = await Test.createTestingModule({ imports: [PipelineComponents] }).compile();
  const app: INestApplication = moduleRef.createNestApplication({
    bodyParser: false,
    logger: new PinoLoggerService(logger),
  });
  await assembleGatewayHttp(app, { config, plans, clock, logger, metrics });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    clock,
    store,
    forwarded,
    tracked,
    decisions: () => decisions,
    keyFor: (name, limits, balance) => {
      const key = generateApiKey();
      const terms =
        balance === undefined ? undefined : { refill: null, refillSet: false, costs: {} as CreditTerms['costs'] };
      if (balance !== undefined) ledger.set(name, balance);
      keys.set(hashApiKey(key), { name, plan: 'free', limits, billingAnchorMs: clock.now(), credits: terms });
      return key;
    },
    uncheckableKey: () => {
      const key = generateApiKey();
      uncheckable.add(hashApiKey(key));
      return key;
    },
    // AppMetrics is one of the module's providers: app.close() runs its shutdown hook, which closes its port.
    close: () => app.close(),
  };
}
