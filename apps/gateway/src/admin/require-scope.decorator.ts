import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse } from '@nestjs/swagger';
import { ErrorDto } from '@app/contract';
import { AdminScope } from '../consumers/admin-scopes';

export const REQUIRED_SCOPE = 'admin:required-scope';

/**
 * The one scope an admin route needs (issue #24): the guard refuses (403 FORBIDDEN) a token without it, and a
 * route without this decorator to everyone but root. The admin OpenAPI document shows it as `x-required-scope`.
 */
export function RequireScope(scope: AdminScope): MethodDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    ApiExtension('x-required-scope', scope),
    ApiForbiddenResponse({ type: ErrorDto, description: `The token lacks the scope \`${scope}\`, or the target is outside its own consumers or plans.` }),
  );
}
