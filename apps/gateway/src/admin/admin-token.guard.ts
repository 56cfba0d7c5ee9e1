import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@app/errors';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AdminActor, ANONYMOUS_ACTOR, ROOT_ACTOR } from '../access/admin-context';
import { routeRefusal, takesNoAdminToken } from '../access/admin-policy';
import { ADMIN_TOKEN_PREFIX, AdminTokensService } from '../access/admin-tokens.service';
import { AuditLog } from '../access/audit-log';
import { AdminRequest } from '../access/admin-request';
import { ADMIN_OPERATION } from '../access/admin-operation.decorator';
import { INVALID_TOKEN_MESSAGE, MISSING_TOKEN_MESSAGE } from '../admin-conventions/admin-responses';

export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');
const REALM = 'Bearer realm="petstore-admin"';

/** Digests of equal length, so that the comparison takes the same time whatever the token's length or content. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Every admin API route needs `Authorization: Bearer <token>`: ADMIN_TOKEN (root, every scope, compared in
 * constant time) or an admin token (`adm_…`, looked up by hash) that the route's entry in the admin policy admits
 * (its @AdminOperation's operationId in ADMIN_POLICY: the scopes, and no `fleet` route for a restricted token).
 * Deny by default: a route without an entry refuses everyone, root included. Refusals (401, 403) go to the audit log, rate-limited.
 * A recognised token's actor, with the origin the admin app's middleware set, becomes the request's context (@AdminCall).
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(
    @Inject(ADMIN_TOKEN) token: string,
    private readonly reflector: Reflector,
    private readonly tokens: AdminTokensService,
    private readonly audit: AuditLog,
  ) {
    this.expected = digest(token);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const header = request.headers.authorization;
    const match = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header);
    const route = `${request.method} ${(request.route as { path?: string } | undefined)?.path ?? request.path}`;
    const operationId = this.reflector.get<string | undefined>(ADMIN_OPERATION, context.getHandler());
    // A person's sign-in (docs/sso.md): no admin token; the handler verifies the ID token the body carries.
    if (takesNoAdminToken(operationId)) {
      request.adminContext = { ...request.adminOrigin, actor: ANONYMOUS_ACTOR };
      return true;
    }
    let actor: AdminActor | undefined;
    if (match && timingSafeEqual(digest(match[1]), this.expected)) actor = ROOT_ACTOR;
    else if (match && match[1].startsWith(ADMIN_TOKEN_PREFIX)) {
      try {
        actor = await this.tokens.authenticate(match[1]);
      } catch {
        throw new ApiError(
          'SERVICE_UNAVAILABLE',
          'The consumers database, where admin tokens live, is unreachable: retry shortly (ADMIN_TOKEN still works).',
          { 'Retry-After': '5' },
        );
      }
    }
    // Refusals are recorded without waiting: a flood (or a database away) never slows the answer.
    if (!actor) {
      void this.audit.recordDenied({ ...request.adminOrigin, actor: ANONYMOUS_ACTOR }, 401, {
        route: { before: null, after: route },
      });
      throw new ApiError('UNAUTHORIZED', header === undefined ? MISSING_TOKEN_MESSAGE : INVALID_TOKEN_MESSAGE, {
        'WWW-Authenticate': header === undefined ? REALM : `${REALM}, error="invalid_token"`,
      });
    }
    request.adminContext = { ...request.adminOrigin, actor };
    // The policy table decides (access/admin-policy.ts): scopes, and the routes a restricted token never reaches.
    const refusal = routeRefusal(actor, operationId, route);
    if (refusal === null) return true;
    void this.audit.recordDenied(request.adminContext, 403, {
      route: { before: null, after: route },
      operation: { before: null, after: operationId ?? null },
    });
    throw new ApiError('FORBIDDEN', refusal);
  }
}
