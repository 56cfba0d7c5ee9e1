import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse, ApiOperation } from '@nestjs/swagger';
import type { ApiOperationOptions } from '@nestjs/swagger';
import { ErrorDto } from '@app/contract';
import { ADMIN_POLICY, AdminOperationId, OBJECT_RULE_TEXT } from './admin-policy';

/** Where @AdminOperation puts the route's operationId, the guard's key into ADMIN_POLICY. */
export const ADMIN_OPERATION = 'admin:operation';
/** What the admin OpenAPI document shows as `x-required-scope` for a route any valid token may call. */
export const ANY_SCOPE = 'any';
/** What it shows for a route that takes no admin token (a person's sign-in: the ID token is the credential). */
export const NO_TOKEN = 'none';

/**
 * An admin route's OpenAPI operation and its entry in the policy (access/admin-policy.ts), by operationId: the
 * guard looks the route up there (a route without this decorator, or without an entry, refuses everyone), and the
 * document shows what the entry says: `x-required-scope` (the first scope), `x-required-scopes` (all of them),
 * `x-object-restriction` and the 403 a token meets.
 */
export function AdminOperation(options: ApiOperationOptions & { operationId: AdminOperationId }): MethodDecorator {
  const policy = ADMIN_POLICY[options.operationId];
  const scopes: string[] = policy.scopes === ANY_SCOPE || policy.scopes === NO_TOKEN ? [] : [...policy.scopes];
  return applyDecorators(
    ApiOperation(options),
    SetMetadata(ADMIN_OPERATION, options.operationId),
    ApiExtension('x-required-scope', scopes[0] ?? (policy.scopes === NO_TOKEN ? NO_TOKEN : ANY_SCOPE)),
    ...(scopes.length > 1 ? [ApiExtension('x-required-scopes', scopes)] : []),
    ApiExtension('x-object-restriction', { rule: policy.objects, restricted: OBJECT_RULE_TEXT[policy.objects] }),
    ...(scopes.length === 0
      ? []
      : [
          ApiForbiddenResponse({
            type: ErrorDto,
            description: `The token lacks the scope ${scopes.map((s) => `\`${s}\``).join(' + ')}, or the target is outside what it may reach (restricted token: ${OBJECT_RULE_TEXT[policy.objects]}).`,
          }),
        ]),
  );
}
