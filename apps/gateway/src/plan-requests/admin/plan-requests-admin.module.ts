import { Module } from '@nestjs/common';
import { PlanRequestsAdminController } from './plan-requests-admin.controller';

/** The admin API's plan requests: file, list, decide. Its providers come from the gateway app (GatewayProvidersModule, global in the admin app). */
@Module({ controllers: [PlanRequestsAdminController] })
export class PlanRequestsAdminModule {}
