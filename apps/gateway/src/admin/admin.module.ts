import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { GATEWAY_CONFIG } from '../config/gateway.config';
import { ConsumerChanges } from '../consumers/consumer-changes';
import { ConsumerRepository } from '../consumers/consumer.repository';
import { ConsumersFile } from '../consumers/consumers-file.service';
import { PlanLimits } from '../plans/plan-limits';
import { RateLimitStore } from '../rate-limit/rate-limit-store';
import { AdminTokens } from '../consumers/admin-tokens.repository';
import { AuditLog } from '../consumers/audit-log';
import { Clock } from '../clock';
import { UsageExports } from '../usage/usage-exports';
import { UsageHistoryService } from '../usage/usage-history.service';
import { PlanRequests } from '../consumers/plan-requests.repository';
import { ADMIN_TOKEN, AdminTokenGuard } from './admin-token.guard';
import { ConsumerRateLimitService } from './consumer-rate-limit.service';
import { ConsumersAdminController } from './consumers-admin.controller';
import { UsageAdminController } from './usage-admin.controller';
import { DatabaseUnavailableInterceptor } from './database-unavailable.interceptor';
import { ForbiddenAuditInterceptor } from './forbidden-audit.interceptor';
import { TokensAdminController } from './tokens-admin.controller';
import { PlanRequestsAdminController } from './plan-requests-admin.controller';

/**
 * The admin API's providers, taken from the gateway it runs beside (the same instances: one cache, one pool, one
 * change channel), so that a change made here reaches this instance's cache at once.
 */
export interface AdminDependencies {
  token: string;
  gateway: { get<T>(type: abstract new (...args: never[]) => T): T; get<T>(token: symbol | string): T };
}

const SHARED = [ConsumerRepository, ConsumersFile, ConsumerChanges, PlanLimits, RateLimitStore, AdminTokens, AuditLog, UsageHistoryService, UsageExports, Clock, PlanRequests] as const;

@Module({})
export class AdminModule {
  static forRoot({ token, gateway }: AdminDependencies): DynamicModule {
    return {
      module: AdminModule,
      controllers: [ConsumersAdminController, TokensAdminController, UsageAdminController, PlanRequestsAdminController],
      providers: [
        { provide: ADMIN_TOKEN, useValue: token },
        { provide: GATEWAY_CONFIG, useValue: gateway.get(GATEWAY_CONFIG) },
        ...SHARED.map((type) => ({ provide: type, useValue: gateway.get<unknown>(type as never) })),
        ConsumerRateLimitService,
        { provide: APP_GUARD, useClass: AdminTokenGuard },
        { provide: APP_INTERCEPTOR, useClass: DatabaseUnavailableInterceptor },
        { provide: APP_INTERCEPTOR, useClass: ForbiddenAuditInterceptor },
      ],
    };
  }
}
