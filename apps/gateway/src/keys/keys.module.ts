import { Module } from '@nestjs/common';
import { ConsumersModule } from '../consumers/consumers.module';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { KeyCache } from './key-cache';
import { KeyLookupRepository } from './key-lookup.repository';

/**
 * The data plane's side of keys: the hot-path lookup by hash, the key filter and the cache in front of them,
 * kept fresh by the consumers' change channel.
 */
@Module({
  imports: [GatewayDatabaseModule, ConsumersModule],
  providers: [KeyLookupRepository, KeyCache],
  exports: [KeyCache, KeyLookupRepository],
})
export class KeysModule {}
