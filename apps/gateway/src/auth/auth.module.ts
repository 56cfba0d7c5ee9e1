import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdmissionMiddleware } from './admission.middleware';
import { ApiKeyGuard } from './api-key.guard';

/**
 * Authentication and the rate-limit decision happen once, in AdmissionMiddleware, for every request under /v1
 * before the router (create-gateway-app.ts mounts it, the proxy's fast path calls it); the guard denies by
 * default whatever route it did not admit.
 */
@Module({
  providers: [AdmissionMiddleware, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [AdmissionMiddleware],
})
export class AuthModule {}
