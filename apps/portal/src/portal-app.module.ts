import { DynamicModule, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppMetrics } from '@app/platform';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { PLAN_CATALOGUE, SignInAudit } from '@app/web';
import { AccountSignIn } from './accounts/account-sign-in';
import { AccountsController } from './accounts/accounts.controller';
import { AccountsService } from './accounts/accounts.service';
import { AfterAnswer } from './accounts/after-answer';
import { SignedInGuard } from './accounts/signed-in.guard';
import { UnverifiedPurge } from './accounts/unverified-purge';
import { PORTAL_CONFIG, PortalConfig } from './config/portal.config';
import { DashboardController } from './dashboard/dashboard.controller';
import { HealthController } from './health.controller';
import { PortalApi } from './admin-api/portal-api';
import { PortalDatabase } from './database/portal-database';
import { Mailer } from '@app/mail';
import { ShutdownHooks } from './shutdown-hooks';
import { ReferenceController } from './reference/reference.controller';
import { ConsumerCap } from './throttle/consumer-cap';
import { PostgresThrottlerStorage } from './throttle/postgres-throttler.storage';
import { PORTAL_POOL, SignInAttempts } from './throttle/sign-in-attempts';
import { accountTracker, addressTracker } from './throttle/sign-in-throttler.guard';
import { WebhooksController } from './webhooks/webhooks.controller';
import { IdentityLinks } from './sso/identity-links';
import { PortalIdentityProviders } from './sso/portal-identity-providers';
import { ProviderSignInController } from './sso/provider-sign-in.controller';
import { SignInMethodsController } from './sso/sign-in-methods.controller';

/** The developer portal: accounts, the dashboard and webhooks over the admin API, the API reference. */
@Module({})
export class PortalAppModule {
  static forRoot(config: PortalConfig, database: PortalDatabase, mailer: Mailer, metrics: AppMetrics): DynamicModule {
    const window = config.throttle.windowMs;
    return {
      module: PortalAppModule,
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [
            {
              name: 'address',
              ttl: window,
              limit: config.throttle.addressLimit,
              blockDuration: window,
              getTracker: (req) => addressTracker(req as Request),
            },
            {
              name: 'account',
              ttl: window,
              limit: config.throttle.accountLimit,
              blockDuration: window,
              getTracker: (req) => accountTracker(req as Request),
            },
          ],
          storage: new PostgresThrottlerStorage(database.pool, config.schema),
          setHeaders: false,
        }),
      ],
      controllers: [
        AccountsController,
        ProviderSignInController,
        SignInMethodsController,
        DashboardController,
        WebhooksController,
        ReferenceController,
        HealthController,
      ],
      providers: [
        { provide: PORTAL_CONFIG, useValue: config },
        { provide: PLAN_CATALOGUE, useValue: config.plans },
        { provide: DataSource, useValue: database.dataSource },
        { provide: Mailer, useValue: mailer },
        { provide: PORTAL_POOL, useValue: database.pool },
        { provide: AppMetrics, useValue: metrics },
        AfterAnswer,
        AccountsService,
        AccountSignIn,
        // Sign-in with the company's identity providers (PORTAL_OIDC_PROVIDERS, docs/sso.md).
        { provide: PortalIdentityProviders, useValue: new PortalIdentityProviders(config) },
        IdentityLinks,
        UnverifiedPurge,
        SignInAttempts,
        // Failed sign-ins and lockouts in the admin audit, with the portal's own token (docs/portal.md).
        { provide: SignInAudit, useValue: new SignInAudit(config.adminUrl, config.adminToken) },
        ConsumerCap,
        PortalApi,
        SignedInGuard,
        ShutdownHooks,
      ],
    };
  }
}
