import { ApiError } from '@app/errors';
import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AdminActor, AdminRequestContext } from '../access/admin-context';
import { ADMIN_SCOPES } from '../access/admin-scopes';
import { AdminTokensService } from '../access/admin-tokens.service';
import { AuditLog } from '../access/audit-log';
import { AdminRequest } from '../access/admin-request';
import { AdminTokenGuard } from './admin-token.guard';
import { ADMIN_OPERATION } from '../access/admin-operation.decorator';

const ROOT = 'r'.repeat(40);
const everyScope: AdminActor = {
  id: '00000000-0000-4000-8000-000000000001',
  name: 'all-scopes',
  scopes: [...ADMIN_SCOPES],
  ownConsumersOnly: false,
  plans: null,
};

/** A request as the admin app's first middleware leaves it (its origin set). */
function requestWith(authorization: string): AdminRequest {
  const adminOrigin = { requestId: 'req-1', source: '127.0.0.1' };
  return {
    headers: { authorization },
    method: 'GET',
    path: '/new-route',
    route: { path: '/new-route' },
    adminOrigin,
  } as unknown as AdminRequest;
}

function contextFor(request: AdminRequest, handler: () => void): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => request }),
    getHandler: () => handler,
  } as unknown as ExecutionContext;
}

describe('AdminTokenGuard', () => {
  const denied: number[] = [];
  const deniedContexts: AdminRequestContext[] = [];
  const tokens = {
    authenticate: async (token: string) => (token === 'adm_good' ? everyScope : undefined),
  } as unknown as AdminTokensService;
  const audit = {
    recordDenied: async (context: AdminRequestContext, status: number) => {
      deniedContexts.push(context);
      denied.push(status);
    },
  } as unknown as AuditLog;
  const guard = new AdminTokenGuard(ROOT, new Reflector(), tokens, audit);
  const undeclared = () => undefined;
  const declared = () => undefined;
  Reflect.defineMetadata(ADMIN_OPERATION, 'getConsumerUsage', declared);
  const fleet = () => undefined;
  Reflect.defineMetadata(ADMIN_OPERATION, 'getTopConsumers', fleet);
  const unlisted = () => undefined;
  Reflect.defineMetadata(ADMIN_OPERATION, 'notInThePolicy', unlisted);
  const anyToken = () => undefined;
  Reflect.defineMetadata(ADMIN_OPERATION, 'getCurrentToken', anyToken);

  const run = (authorization: string, handler: () => void) =>
    guard.canActivate(contextFor(requestWith(authorization), handler));

  it('denies a route without an entry in the admin policy to every token, root included (deny by default)', async () => {
    for (const handler of [undeclared, unlisted]) {
      await expect(run('Bearer adm_good', handler)).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(run(`Bearer ${ROOT}`, handler)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
    expect(denied).toEqual([403, 403, 403, 403]);
  });

  it('refuses a fleet route to a restricted token holding its scope; lets an unrestricted one through', async () => {
    const restricted = { ...everyScope, ownConsumersOnly: true };
    const portal = new AdminTokenGuard(
      ROOT,
      new Reflector(),
      { authenticate: async () => restricted } as unknown as AdminTokensService,
      audit,
    );
    await expect(portal.canActivate(contextFor(requestWith('Bearer adm_x'), fleet))).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(portal.canActivate(contextFor(requestWith('Bearer adm_x'), declared))).resolves.toBe(true);
    await expect(run('Bearer adm_good', fleet)).resolves.toBe(true);
  });

  it('lets a token holding the declared scope through; refuses an unknown one with 401', async () => {
    await expect(run('Bearer adm_good', declared)).resolves.toBe(true);
    const refused = await run('Bearer adm_bad', declared).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('UNAUTHORIZED');
  });

  it('lets any valid token through a route that the policy opens to any token (GET /token), never an invalid one', async () => {
    const noScopes = { ...everyScope, scopes: [] };
    const narrow = new AdminTokenGuard(
      ROOT,
      new Reflector(),
      { authenticate: async () => noScopes } as unknown as AdminTokensService,
      audit,
    );
    const check = (handler: () => void) => narrow.canActivate(contextFor(requestWith('Bearer adm_x'), handler));
    await expect(check(anyToken)).resolves.toBe(true);
    await expect(check(declared)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(run('Bearer adm_bad', anyToken)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it("sets the request's context (the token's actor, the request's id and source) for @AdminCall; a refusal is audited with it", async () => {
    const accepted = requestWith('Bearer adm_good');
    await expect(guard.canActivate(contextFor(accepted, declared))).resolves.toBe(true);
    expect(accepted.adminContext).toEqual({ actor: everyScope, requestId: 'req-1', source: '127.0.0.1' });

    const unknown = requestWith('Bearer adm_bad');
    deniedContexts.length = 0;
    await expect(guard.canActivate(contextFor(unknown, declared))).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(unknown.adminContext).toBeUndefined();
    expect(deniedContexts).toEqual([
      { actor: expect.objectContaining({ id: null, name: 'anonymous' }), requestId: 'req-1', source: '127.0.0.1' },
    ]);
  });
});
