import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AccountEntity } from './account.entity';
import { AccountsService } from './accounts.service';
import { KeyPending, SignInRequired } from './sign-in-required';

declare module 'express-session' {
  interface SessionData {
    /** The signed-in account (set only after a successful sign-in or verification, on a regenerated session). */
    accountId?: string;
    /** The provider identity the account signed in with (docs/sso.md): the sign-out's audit row names it. */
    identity?: { issuer: string; subject: string };
  }
}

export interface SignedInRequest extends Request {
  account: AccountEntity & { consumerName: string };
}

/**
 * Pages of a signed-in, verified account that owns a consumer. A signed-in account whose consumer waits for its
 * block's hourly cap gets KeyPending (a 303 to /key, which says when it comes); anyone else gets SignInRequired,
 * which the portal's exception filter turns into a 303 to the sign-in page (as the console's OperatorGuard); a
 * session whose account is gone is forgotten.
 */
@Injectable()
export class SignedInGuard implements CanActivate {
  constructor(private readonly accounts: AccountsService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const id = request.session?.accountId;
    const account = id ? await this.accounts.find(id) : null;
    if (account && account.verifiedAt && account.consumerName) {
      (request as SignedInRequest).account = account as SignedInRequest['account'];
      return true;
    }
    if (account && account.verifiedAt) throw new KeyPending();
    if (request.session) delete request.session.accountId;
    throw new SignInRequired();
  }
}
