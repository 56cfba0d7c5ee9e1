import { Module } from '@nestjs/common';
import { ClientBindingsAdminController } from './client-bindings-admin.controller';

/** The admin API's OAuth client bindings. Its service comes from the gateway app (GatewayProvidersModule, global in the admin app). */
@Module({ controllers: [ClientBindingsAdminController] })
export class ClientBindingsAdminModule {}
