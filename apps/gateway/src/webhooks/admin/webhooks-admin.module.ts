import { Module } from '@nestjs/common';
import { WebhooksAdminController } from './webhooks-admin.controller';

/** The admin API's webhooks: endpoints, deliveries, redelivery. Its providers come from the gateway app (GatewayProvidersModule). */
@Module({ controllers: [WebhooksAdminController] })
export class WebhooksAdminModule {}
