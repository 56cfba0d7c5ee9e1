import { AdminApi, PLAN_CATALOGUE, SignInAudit } from '@app/web';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuditController } from './audit/audit.controller';
import { AuthController, TOKEN_SIGN_IN } from './auth/auth.controller';
import { OidcIdentityProvider } from '@app/web';
import { OidcSignInController } from './auth/oidc-sign-in.controller';
import { HealthController } from './auth/health.controller';
import { OperatorGuard } from './auth/operator.guard';
import { ConsoleSignInThrottle } from './auth/sign-in-throttle';
import { TokenVault } from './auth/token-vault';
import { ConsoleConfig } from './config/console.config';
import { ConsumerCredentialsController } from './consumers/consumer-credentials.controller';
import { ConsumersController } from './consumers/consumers.controller';
import { OverviewController } from './overview/overview.controller';
import { PlanRequestsController } from './plan-requests/plan-requests.controller';
import { TokensController } from './tokens/tokens.controller';
import { WebhooksController } from './webhooks/webhooks.controller';

/** The operator console: pages over the admin API, each call made with the signed-in operator's own token. */
@Module({})
export class ConsoleAppModule {
  static register(config: ConsoleConfig): DynamicModule {
    return {
      module: ConsoleAppModule,
      controllers: [
        HealthController,
        AuthController,
        ...(config.oidc ? [OidcSignInController] : []),
        OverviewController,
        ConsumersController,
        ConsumerCredentialsController,
        PlanRequestsController,
        TokensController,
        AuditController,
        WebhooksController,
      ],
      providers: [
        { provide: AdminApi, useValue: new AdminApi({ baseUrl: config.adminUrl, timeoutMs: 10_000 }) },
        { provide: TokenVault, useValue: new TokenVault(config.sessionSecret) },
        { provide: PLAN_CATALOGUE, useValue: config.plans },
        { provide: ConsoleSignInThrottle, useValue: new ConsoleSignInThrottle() },
        // Sign-ins in the admin audit: CONSOLE_AUDIT_TOKEN (optional) reports what no operator's token can.
        { provide: SignInAudit, useValue: new SignInAudit(config.adminUrl, config.auditToken) },
        { provide: APP_GUARD, useClass: OperatorGuard },
        { provide: TOKEN_SIGN_IN, useValue: config.tokenSignIn },
        // Sign-in with the operators' identity provider (docs/sso.md), when configured.
        ...(config.oidc ? [{ provide: OidcIdentityProvider, useValue: new OidcIdentityProvider(config.oidc) }] : []),
      ],
    };
  }
}
