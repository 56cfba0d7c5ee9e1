import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { BillingService } from '../billing/billing.service';
import { ADMIN_TOKEN, AdminTokenGuard } from './admin-token.guard';
import { BillingAdminController } from './billing-admin.controller';
import { ConsumerRateLimitService } from './consumer-rate-limit.service';
import { ConsumersAdminController } from './consumers-admin.controller';
import { UsageAdminController } from './usage-admin.controller';
import { DatabaseUnavailableInterceptor } from './database-unavailable.interceptor';
import { ForbiddenAuditInterceptor } from './forbidden-audit.interceptor';
import { TokensAdminController } from './tokens-admin.controller';
import { PlanRequestsAdminController } from './plan-requests-admin.controller';
import { GatewayProvidersModule } from './gateway-providers.module';

/** The admin token of the process, and the gateway app whose providers the admin API serves. */
export interface AdminDependencies {
  token: string;
  gateway: INestApplicationContext;
}

/** The admin API: its controllers, guard and interceptors over the gateway's providers (GatewayProvidersModule). */
@Module({})
export class AdminModule {
  static forRoot({ token, gateway }: AdminDependencies): DynamicModule {
    return {
      module: AdminModule,
      imports: [GatewayProvidersModule.lentBy(gateway)],
      controllers: [
        ConsumersAdminController,
        TokensAdminController,
        UsageAdminController,
        PlanRequestsAdminController,
        BillingAdminController,
      ],
      providers: [
        { provide: ADMIN_TOKEN, useValue: token },
        ConsumerRateLimitService,
        BillingService,
        { provide: APP_GUARD, useClass: AdminTokenGuard },
        { provide: APP_INTERCEPTOR, useClass: DatabaseUnavailableInterceptor },
        { provide: APP_INTERCEPTOR, useClass: ForbiddenAuditInterceptor },
      ],
    };
  }
}
