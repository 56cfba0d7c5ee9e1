import { Module } from '@nestjs/common';
import { UsageAdminController } from './usage-admin.controller';

/** The admin API's usage history: series, top consumers, exports. Its providers come from the gateway app (GatewayProvidersModule, global in the admin app). */
@Module({ controllers: [UsageAdminController] })
export class UsageAdminModule {}
