import { Mailer } from '@app/mail';
import { OutboundClient } from '@app/outbound';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module';
import { AlertsModule } from '../alerts/alerts.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookRetention } from './webhook-retention';
import { WEBHOOK_ENTITIES } from './webhook-tables';

/**
 * Webhooks (issue #49, docs/webhooks.md): the endpoints, the deliveries of the outbox's messages and the worker
 * that sends them. Imports GatewayDatabaseModule so that, on shutdown, the attempts in flight are recorded before
 * that module closes the pool. HTTPS is required in production unless OUTBOUND_ALLOW_LIST names the target.
 */
@Module({
  imports: [
    GatewayDatabaseModule,
    AccessModule,
    AlertsModule,
    TypeOrmModule.forFeature(WEBHOOK_ENTITIES, GATEWAY_DATA_SOURCE),
  ],
  providers: [
    {
      provide: OutboundClient,
      inject: [GATEWAY_CONFIG],
      useFactory: (config: GatewayConfig) =>
        new OutboundClient({ requireHttps: config.production, allowList: config.webhooks.allowList }),
    },
    {
      provide: Mailer,
      inject: [GATEWAY_CONFIG],
      useFactory: (config: GatewayConfig) => new Mailer(config.mail.smtpUrl, config.mail.from),
    },
    WebhookEndpointsService,
    WebhookDeliveriesRepository,
    WebhookDeliveryWorker,
    WebhookRetention,
  ],
  exports: [WebhookEndpointsService, WebhookDeliveryWorker, WebhookRetention],
})
export class WebhooksModule {}
