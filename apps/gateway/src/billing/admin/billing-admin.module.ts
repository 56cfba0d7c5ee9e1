import { Module } from '@nestjs/common';
import { BillingService } from '../billing.service';
import { BillingAdminController } from './billing-admin.controller';

/** The admin API's billing: a consumer's anchor and monthly quota. Its dependencies come from the gateway app (GatewayProvidersModule, global in the admin app). */
@Module({ controllers: [BillingAdminController], providers: [BillingService] })
export class BillingAdminModule {}
