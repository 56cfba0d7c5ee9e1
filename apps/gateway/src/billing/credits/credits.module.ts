import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GATEWAY_DATA_SOURCE } from '../../database/data-source.options';
import { GatewayDatabaseModule } from '../../database/gateway-database.module';
import { CREDIT_ENTITIES } from './credit-entities';
import { CreditLedgerRepository } from './credit-ledger.repository';
import { CreditsService } from './credits.service';

/**
 * Prepaid credits (issue #38): the ledger and the spend in the database, and the request path's part. Imports
 * GatewayDatabaseModule so that, on shutdown, the last spend is written before that module closes the pool.
 */
@Module({
  imports: [GatewayDatabaseModule, TypeOrmModule.forFeature(CREDIT_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [CreditLedgerRepository, CreditsService],
  exports: [CreditLedgerRepository, CreditsService],
})
export class CreditsModule {}
