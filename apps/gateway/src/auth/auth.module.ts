import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { KeysModule } from '../keys/keys.module';
import { TokensModule } from '../tokens/tokens.module';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyGuard } from './api-key.guard';

/**
 * The bearer API key or access token of a /v1 request (ApiKeyAuthenticator, which the pipeline calls), and deny by default for
 * the routes Nest's router serves (ApiKeyGuard: only @Public() ones answer).
 */
@Module({
  imports: [KeysModule, TokensModule],
  providers: [ApiKeyAuthenticator, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ApiKeyAuthenticator],
})
export class AuthModule {}
