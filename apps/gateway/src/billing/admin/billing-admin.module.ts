import { Module } from '@nestjs/common';
import { BillingService } from '../billing.service';
import { BillingAdminController } from './billing-admin.controller';
import { CreditsAdminController } from './credits-admin.controller';
import { CreditsAdminService } from './credits-admin.service';
import { MonthQuotaCountService } from './month-quota-count.service';

/** The admin API's billing: a consumer's anchor, monthly quota and prepaid credits. Its dependencies come from the gateway app (GatewayProvidersModule, global in the admin app). */
@Module({
  controllers: [BillingAdminController, CreditsAdminController],
  providers: [BillingService, CreditsAdminService, MonthQuotaCountService],
})
export class BillingAdminModule {}
