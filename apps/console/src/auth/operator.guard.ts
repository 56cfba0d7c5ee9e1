import { AdminApi } from '@app/web';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { abilitiesOf, setAbilitiesOf, setTokenOf } from './operator';
import { TokenVault } from './token-vault';
import { PUBLIC_PAGE } from './public-page.decorator';
import { SignInRequired } from './sign-in-required';

/**
 * Every page but sign-in needs a signed-in operator. On each request the operator's token is checked again with
 * GET /token (one loopback call): a revoked or expired token ends the session on its very next request, and the
 * scopes the pages derive their buttons from are always the token's current ones.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly admin: AdminApi,
    private readonly vault: TokenVault,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const response = context.switchToHttp().getResponse<Response>();
    const operator = request.session.operator;
    if (this.reflector.get<boolean | undefined>(PUBLIC_PAGE, context.getHandler())) return true;
    const token = operator === undefined ? undefined : this.vault.open(operator.sealedToken);
    if (!operator || token === undefined) throw new SignInRequired();
    // A 401 here (revoked, expired) propagates as an AdminApiError: the exception filter ends the session.
    const record = await this.admin.as(token).GET('/token');
    request.session.operator = { ...operator, ...record, sealedToken: operator.sealedToken };
    setTokenOf(request, token);
    // A person signed in with the identity provider is named by their email (their token's name says `sso:` too).
    response.locals.operator = { name: operator.person?.email ?? record.name };
    // Computed once per request: the controllers (abilitiesOfRequest) and the views (can) read this one value.
    const can = abilitiesOf(record.scopes, record);
    setAbilitiesOf(request, can);
    response.locals.can = can;
    return true;
  }
}
