import type { AdminApi, AdminCurrentToken } from '@app/web';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { abilitiesOfRequest, tokenOf } from './operator';
import { OperatorGuard } from './operator.guard';
import { TokenVault } from './token-vault';

describe('OperatorGuard', () => {
  const vault = new TokenVault('s'.repeat(32));
  const record = {
    name: 'op',
    scopes: ['consumers:read', 'usage:read', 'keys:write'],
    ownConsumersOnly: false,
    plans: null,
    actsForUsers: false,
  } as unknown as AdminCurrentToken;
  let tokenReads = 0;
  const admin = {
    as: () => ({
      GET: () => {
        tokenReads += 1;
        return Promise.resolve(record);
      },
    }),
  } as unknown as AdminApi;

  function signedInRequest(): { request: Request; response: Response; context: ExecutionContext } {
    const request = {
      session: { operator: { ...record, scopes: ['consumers:read'], sealedToken: vault.seal('adm_token') } },
    } as unknown as Request;
    const response = { locals: {} } as unknown as Response;
    const context = {
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }),
      getHandler: () => () => undefined,
    } as unknown as ExecutionContext;
    return { request, response, context };
  }

  it('computes the abilities once, from the token record it read: the views and the controllers share that value', async () => {
    const { request, response, context } = signedInRequest();
    expect(() => abilitiesOfRequest(request)).toThrow('the OperatorGuard must run first');
    tokenReads = 0;
    await expect(new OperatorGuard(new Reflector(), admin, vault).canActivate(context)).resolves.toBe(true);
    expect(tokenReads).toBe(1);
    expect(tokenOf(request)).toBe('adm_token');
    const can = abilitiesOfRequest(request);
    expect(can).toMatchObject({ usageRead: true, fleetUsageRead: true, keysWrite: true, consumersWrite: false });
    // One value per request: the same object for the views (response.locals.can) and on every controller read.
    expect(response.locals.can).toBe(can);
    expect(abilitiesOfRequest(request)).toBe(can);
    // Another request has abilities of its own only once the guard runs for it.
    expect(() => abilitiesOfRequest(signedInRequest().request)).toThrow('the OperatorGuard must run first');
  });
});
