import { Module } from '@nestjs/common';
import { ConsumerRateLimitService } from './consumer-rate-limit.service';
import { ConsumersAdminController } from './consumers-admin.controller';

/** The admin API's consumers and keys: create, update, issue, rotate, revoke, import/export, rate-limit state. Its providers come from the gateway app (GatewayProvidersModule, global in the admin app). */
@Module({ controllers: [ConsumersAdminController], providers: [ConsumerRateLimitService] })
export class ConsumersAdminModule {}
