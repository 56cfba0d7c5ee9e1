import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { AccessAdminModule } from '../access/admin/access-admin.module';
import { BillingAdminModule } from '../billing/admin/billing-admin.module';
import { ClientBindingsAdminModule } from '../client-bindings/admin/client-bindings-admin.module';
import { ConsumersAdminModule } from '../consumers/admin/consumers-admin.module';
import { PlanRequestsAdminModule } from '../plan-requests/admin/plan-requests-admin.module';
import { SsoAdminModule } from '../sso/admin/sso-admin.module';
import { UsageAdminModule } from '../usage/admin/usage-admin.module';
import { WebhooksAdminModule } from '../webhooks/admin/webhooks-admin.module';
import { ADMIN_TOKEN, AdminTokenGuard } from './admin-token.guard';
import { DatabaseUnavailableInterceptor } from './database-unavailable.interceptor';
import { EndUserInterceptor } from './end-user.interceptor';
import { ForbiddenAuditInterceptor } from './forbidden-audit.interceptor';
import { GatewayProvidersModule } from './gateway-providers.module';

/** The admin token of the process, and the gateway app whose providers the admin API serves. */
export interface AdminDependencies {
  token: string;
  gateway: INestApplicationContext;
}

/**
 * The admin API: each room's admin module (its controllers) over the gateway's providers (GatewayProvidersModule),
 * and the shell's guard and interceptors. The rooms are listed in the order their operations appear in the
 * admin OpenAPI document.
 */
@Module({})
export class AdminModule {
  static forRoot({ token, gateway }: AdminDependencies): DynamicModule {
    return {
      module: AdminModule,
      imports: [
        GatewayProvidersModule.lentBy(gateway),
        ConsumersAdminModule,
        ClientBindingsAdminModule,
        AccessAdminModule,
        SsoAdminModule,
        UsageAdminModule,
        PlanRequestsAdminModule,
        BillingAdminModule,
        WebhooksAdminModule,
      ],
      providers: [
        { provide: ADMIN_TOKEN, useValue: token },
        { provide: APP_GUARD, useClass: AdminTokenGuard },
        { provide: APP_INTERCEPTOR, useClass: DatabaseUnavailableInterceptor },
        // Before ForbiddenAuditInterceptor: the repository's 403 rows then name the end user too.
        { provide: APP_INTERCEPTOR, useClass: EndUserInterceptor },
        { provide: APP_INTERCEPTOR, useClass: ForbiddenAuditInterceptor },
      ],
    };
  }
}
