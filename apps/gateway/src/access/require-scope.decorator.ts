import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse } from '@nestjs/swagger';
import { ErrorDto } from '@app/contract';
import { AdminScope } from './admin-scopes';

export const REQUIRED_SCOPE = 'admin:required-scope';
export const ANY_VALID_TOKEN = 'admin:any-valid-token';
/** What the admin OpenAPI document shows as `x-required-scope` for a route any valid token may call. */
export const ANY_SCOPE = 'any';

/**
 * The one scope an admin route needs (issue #24): the guard refuses (403 FORBIDDEN) a token without it, and a
 * route without this decorator to everyone but root. The admin OpenAPI document shows it as `x-required-scope`.
 */
export function RequireScope(scope: AdminScope): MethodDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    ApiExtension('x-required-scope', scope),
    ApiForbiddenResponse({
      type: ErrorDto,
      description: `The token lacks the scope \`${scope}\`, or the target is outside its own consumers or plans.`,
    }),
  );
}

/**
 * The explicit opt-in for a route every valid token may call, whatever its scopes (GET /token: who am I). Without
 * it (and without @RequireScope) a route is root's only. The OpenAPI document shows `x-required-scope: any`.
 */
export function AnyValidToken(): MethodDecorator {
  return applyDecorators(SetMetadata(ANY_VALID_TOKEN, true), ApiExtension('x-required-scope', ANY_SCOPE));
}
