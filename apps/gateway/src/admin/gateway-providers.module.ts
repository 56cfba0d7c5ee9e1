import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { CreditsService } from '../credits/credits.service';
import { Clock } from '../clock';
import { GATEWAY_CONFIG } from '../config/gateway.config';
import { AdminTokensService } from '../access/admin-tokens.service';
import { AuditLog } from '../access/audit-log';
import { ClientBindingsService } from '../client-bindings/client-bindings.service';
import { ConsumerChanges } from '../consumers/consumer-changes';
import { ConsumerKeysService } from '../consumers/consumer-keys.service';
import { ConsumersService } from '../consumers/consumers.service';
import { ConsumersFileService } from '../consumers/consumers-file.service';
import { PlanRequestsService } from '../plan-requests/plan-requests.service';
import { PlanLimits } from '../plans/plan-limits';
import { RateLimitStore } from '../rate-limit/rate-limit-store';
import { PersonSignIn } from '../sso/person-sign-in';
import { UsageExports } from '../usage/usage-exports';
import { UsageHistoryService } from '../usage/usage-history.service';
import { UsageService } from '../usage/usage.service';
import { WebhookEndpointsService } from '../webhooks/webhook-endpoints.service';

/** What the admin API serves from the gateway: the same instances (one cache, one pool, one change channel). */
export const GATEWAY_PROVIDERS = [
  GATEWAY_CONFIG,
  Clock,
  PlanLimits,
  RateLimitStore,
  CreditsService,
  ConsumersService,
  ConsumerKeysService,
  ConsumersFileService,
  ClientBindingsService,
  ConsumerChanges,
  AdminTokensService,
  AuditLog,
  PersonSignIn,
  PlanRequestsService,
  UsageHistoryService,
  UsageExports,
  UsageService,
  WebhookEndpointsService,
] as const;

/** The hooks Nest calls on every provider of an application, on `init()` and `close()`. */
export const LIFECYCLE_HOOKS: ReadonlySet<PropertyKey> = new Set([
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/**
 * `instance` as another application sees it: every property and method, but no lifecycle hook, so that only the
 * application that owns it starts and stops it. Reads and writes reach the instance itself (one state).
 */
export function withoutLifecycleHooks<T extends object>(instance: T): T {
  return new Proxy(instance, {
    get: (target, property) => (LIFECYCLE_HOOKS.has(property) ? undefined : Reflect.get(target, property, target)),
    has: (target, property) => !LIFECYCLE_HOOKS.has(property) && Reflect.has(target, property),
  });
}

/**
 * The gateway's providers lent to the admin app. Two Nest applications cannot share a module instance (one
 * container each: nestjs/nest#942), so the gateway app is the one composition root: it builds every provider
 * and runs every lifecycle hook once (migrations, the change channel, retention timers, the last usage batch).
 * The admin app, an HTTP shell on its own port, gets the same instances without their hooks: its `init()` and
 * `close()` start and stop nothing of the gateway's (docs/decisions.md).
 */
@Module({})
export class GatewayProvidersModule {
  static lentBy(gateway: INestApplicationContext): DynamicModule {
    const providers = GATEWAY_PROVIDERS.map((token) => ({
      provide: token,
      useValue: withoutLifecycleHooks(gateway.get<object>(token as never)),
    }));
    // Global: every room's admin module injects them without importing the admin shell (which sits above it).
    return { global: true, module: GatewayProvidersModule, providers, exports: [...GATEWAY_PROVIDERS] };
  }
}
