import { AppMetrics } from '@app/platform';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { PLAN_TABLE, PlanTable } from './plans/plans';
import { Clock, SystemClock } from './clock';
import { GATEWAY_CONFIG, GatewayConfig } from './config/gateway.config';
import { AccessModule } from './access/access.module';
import { ClientBindingsModule } from './client-bindings/client-bindings.module';
import { HealthModule } from './health/health.module';
import { PipelineModule } from './pipeline/pipeline.module';
import { PlanRequestsModule } from './plan-requests/plan-requests.module';
import { ProxyModule } from './proxy/proxy.module';
import { ReconciledConsumersModule } from './reconciled-consumers.module';
import { SsoModule } from './sso/sso.module';
import { UnbanPropagationModule } from './unban-propagation.module';
import { UsageExportModule } from './usage-export/usage-export.module';
import { WebhooksModule } from './webhooks/webhooks.module';

export interface GatewayOptions {
  config: GatewayConfig;
  plans: PlanTable;
  /** Tests pass a fake clock to cross a sunset or a window's end. */
  clock?: Clock;
  /** The app's Prometheus registry and HTTP metrics (created with the app). */
  metrics?: AppMetrics;
  /** Where the JSON logs go (standard output unless a test reads them). */
  logDestination?: DestinationStream;
}

/** What every feature reads: the validated configuration, the plan table, the clock and the metrics registry. */
@Global()
@Module({})
class GatewayCoreModule {
  static forRoot(options: GatewayOptions): DynamicModule {
    const providers = [
      { provide: GATEWAY_CONFIG, useValue: options.config },
      { provide: PLAN_TABLE, useValue: options.plans },
      { provide: Clock, useValue: options.clock ?? new SystemClock() },
      { provide: AppMetrics, useValue: options.metrics ?? new AppMetrics('gateway') },
    ];
    return { module: GatewayCoreModule, providers, exports: providers.map((p) => p.provide) };
  }
}

@Module({})
export class GatewayAppModule {
  static forRoot(options: GatewayOptions): DynamicModule {
    return {
      module: GatewayAppModule,
      imports: [
        GatewayCoreModule.forRoot(options),
        PipelineModule,
        ProxyModule,
        HealthModule,
        UnbanPropagationModule,
        ReconciledConsumersModule,
        // The control plane's rooms the public app does not reach itself: built here once, lent to the admin app.
        AccessModule,
        PlanRequestsModule,
        ClientBindingsModule,
        // Operators' sign-in with their identity provider (docs/sso.md).
        SsoModule,
        // Usage as events for a billing system: the exporter (one instance at a time) and its outbox (docs/usage-export.md).
        UsageExportModule,
        // Webhooks: the endpoints the admin API keeps, and the worker that delivers the outbox (docs/webhooks.md).
        WebhooksModule,
      ],
    };
  }
}
