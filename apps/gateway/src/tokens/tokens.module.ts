import { Module } from '@nestjs/common';
import { ConsumersModule } from '../consumers/consumers.module';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { ClientBindingLookupRepository } from './client-binding-lookup.repository';
import { TokenCache } from './token-cache';

/**
 * The data plane's side of OAuth access tokens: the issuers' keys, verification (jose) and introspection, the cache
 * of verified tokens and of client bindings, kept fresh by the consumers' change channel.
 */
@Module({
  imports: [GatewayDatabaseModule, ConsumersModule],
  providers: [ClientBindingLookupRepository, TokenCache],
  exports: [TokenCache],
})
export class TokensModule {}
