import { Module } from '@nestjs/common';
import { PersonSessionsAdminController } from './person-sessions-admin.controller';

/** The admin API's sign-in of people (docs/sso.md). PersonSignIn comes from the gateway app (GatewayProvidersModule). */
@Module({ controllers: [PersonSessionsAdminController] })
export class SsoAdminModule {}
