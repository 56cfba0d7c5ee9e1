import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { CREDIT_ENTITIES } from './credit-entities';
import { CreditFlushRequests, LocalCreditFlushRequests, RedisCreditFlushRequests } from './credit-flush-requests';
import { CreditLedgerRepository } from './credit-ledger.repository';
import { CreditsService } from './credits.service';

/**
 * Prepaid credits (issue #38): the ledger and the spend in the database, and the request path's part. Imports
 * GatewayDatabaseModule so that, on shutdown, the last spend is written before that module closes the pool.
 */
@Module({
  imports: [GatewayDatabaseModule, TypeOrmModule.forFeature(CREDIT_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [
    CreditLedgerRepository,
    CreditsService,
    {
      provide: CreditFlushRequests,
      inject: [GATEWAY_CONFIG],
      useFactory: (config: GatewayConfig): CreditFlushRequests =>
        config.redis
          ? new RedisCreditFlushRequests(config.redis.connection, config.redis.keyPrefix)
          : new LocalCreditFlushRequests(),
    },
  ],
  exports: [CreditLedgerRepository, CreditsService],
})
export class CreditsModule {}
