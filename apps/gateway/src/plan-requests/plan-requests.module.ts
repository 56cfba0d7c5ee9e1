import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module';
import { ConsumersModule } from '../consumers/consumers.module';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { PLAN_REQUEST_ENTITIES } from './plan-request-entities';
import { PlanRequestsService } from './plan-requests.service';

/** A consumer's request for another plan (or limits), and the operator's decision on it. */
@Module({
  imports: [
    GatewayDatabaseModule,
    AccessModule,
    ConsumersModule,
    TypeOrmModule.forFeature(PLAN_REQUEST_ENTITIES, GATEWAY_DATA_SOURCE),
  ],
  providers: [PlanRequestsService],
  exports: [PlanRequestsService],
})
export class PlanRequestsModule {}
