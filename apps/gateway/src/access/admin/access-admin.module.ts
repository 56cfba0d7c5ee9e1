import { Module } from '@nestjs/common';
import { TokensAdminController } from './tokens-admin.controller';

/** The admin API's tokens and audit log. Its providers come from the gateway app (GatewayProvidersModule, global in the admin app). */
@Module({ controllers: [TokensAdminController] })
export class AccessAdminModule {}
