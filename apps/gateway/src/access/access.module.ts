import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { ACCESS_ENTITIES } from './access-entities';
import { AdminTokensService } from './admin-tokens.service';
import { AuditLog } from './audit-log';

/** Who may call the admin API and what they did: admin tokens (with their scopes) and the audit log. */
@Module({
  imports: [GatewayDatabaseModule, TypeOrmModule.forFeature(ACCESS_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [AdminTokensService, AuditLog],
  exports: [AdminTokensService, AuditLog],
})
export class AccessModule {}
