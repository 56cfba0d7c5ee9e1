import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { SessionData } from 'express-session';
import { AdminApiError, holdShownOnce, redirectAfterSave, regenerateSession } from '@app/web';
import { developerOf, PortalApi } from '../admin-api/portal-api';
import { clientBlock } from '../throttle/client-address';
import { ConsumerCap } from '../throttle/consumer-cap';
import { AccountEntity } from './account.entity';
import { AccountsService } from './accounts.service';
import { SHOWN_KEY } from './shown-key';

export type NewConsumer = { code: 'CREATED'; key: string } | { code: 'CAP_REACHED'; retryAt: Date };

/**
 * What every way in ends with (a password, a verification, a provider's sign-in: docs/sso.md): the account's Free
 * consumer and first key when it has none yet, a new session id (an id planted before, session fixation, is worth
 * nothing after) holding the account, and the page the developer goes on to.
 */
@Injectable()
export class AccountSignIn {
  constructor(
    private readonly accounts: AccountsService,
    private readonly api: PortalApi,
    private readonly consumerCap: ConsumerCap,
  ) {}

  /**
   * Signs `account` in on a regenerated session (with `sessionData` beside the account), then to its new key, the
   * page that says when the key comes, or the dashboard. Never refused for want of a key.
   */
  async signIn(
    account: AccountEntity,
    request: Request,
    response: Response,
    sessionData: Partial<SessionData> = {},
  ): Promise<void> {
    const consumer = account.consumerName ? undefined : await this.createConsumer(account, request);
    await regenerateSession(request);
    Object.assign(request.session, sessionData, { accountId: account.id });
    if (!consumer) return redirectAfterSave(request, response, '/dashboard');
    await this.showNewConsumer(request, response, consumer);
  }

  /**
   * The account's Free consumer, made through the admin API, and its first key, to be shown once; when the request's
   * address block has had this hour's (PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR, all instances), when the next comes.
   */
  async createConsumer(account: AccountEntity, request: Request): Promise<NewConsumer> {
    const claim = await this.consumerCap.claim(clientBlock(request));
    if (!claim.granted) return { code: 'CAP_REACHED', retryAt: claim.retryAt };
    const name = `portal-${account.id.replace(/-/g, '').slice(0, 16)}`;
    const by = developerOf(account, request);
    let key: string;
    try {
      key = (await this.api.createConsumer(by, name)).key.key;
    } catch (error) {
      // Made by an earlier attempt whose answer was lost: the portal created it, so it may issue a key of it.
      if (!(error instanceof AdminApiError && error.code === 'CONSUMER_EXISTS')) throw error;
      key = (await this.api.issueKey(by, name)).key;
    }
    await this.accounts.setConsumer(account.id, name);
    return { code: 'CREATED', key };
  }

  /**
   * Post/Redirect/Get, as every later key: the first key is held in the session for the one page the 303 leads to
   * (/keys/new takes it as it shows it: a reload finds nothing and re-posts nothing), or the 303 leads to /key,
   * which says when it will come. The key is never in the URL.
   */
  async showNewConsumer(request: Request, response: Response, consumer: NewConsumer): Promise<void> {
    if (consumer.code === 'CAP_REACHED') return redirectAfterSave(request, response, '/key');
    holdShownOnce(request, SHOWN_KEY, { secret: consumer.key, details: { welcome: true } });
    await redirectAfterSave(request, response, '/keys/new');
  }
}
