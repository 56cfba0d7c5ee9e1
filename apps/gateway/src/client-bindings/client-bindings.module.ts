import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module';
import { ConsumersModule } from '../consumers/consumers.module';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { CLIENT_BINDING_ENTITIES } from './client-binding-entities';
import { ClientBindingsService } from './client-bindings.service';

/** OAuth clients bound to consumers: the control plane's side (the data plane's is tokens/). */
@Module({
  imports: [
    GatewayDatabaseModule,
    AccessModule,
    ConsumersModule,
    TypeOrmModule.forFeature(CLIENT_BINDING_ENTITIES, GATEWAY_DATA_SOURCE),
  ],
  providers: [ClientBindingsService],
  exports: [ClientBindingsService],
})
export class ClientBindingsModule {}
