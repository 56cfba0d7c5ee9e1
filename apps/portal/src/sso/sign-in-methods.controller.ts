import { Controller, Get, HttpCode, NotFoundException, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { ProviderUnreachable, redirectAfterSave, saveSession, setFlash, SignInAudit } from '@app/web';
import { SignedInGuard, SignedInRequest } from '../accounts/signed-in.guard';
import { clientBlock } from '../throttle/client-address';
import { auditedPerson } from '../throttle/sign-in-attempts';
import { AccountIdentityEntity } from './account-identity.entity';
import { IdentityLinks, personLabel, UnlinkOutcome } from './identity-links';
import { PortalIdentityProviders } from './portal-identity-providers';
import { LinkedIdentityRow, renderSsoView, SignInMethodsView } from './sso.views';

const IDENTITY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NO_SUCH_IDENTITY = 'No such identity provider is linked to your account.';

/** Why an identity stays linked, by the refusal's code (the page and the POST's 409 say the same). */
const KEPT_BECAUSE = {
  REQUIRED_BY_DOMAIN: (provider: string) => `Your email domain signs in with ${provider}: its link stays.`,
  LAST_SIGN_IN_METHOD: () => 'Your only way in: set a password first.',
} as const;
const REFUSED = {
  REQUIRED_BY_DOMAIN: (provider: string) =>
    `${provider} stays linked: addresses of your email domain sign in with it, never with a password.`,
  LAST_SIGN_IN_METHOD: (provider: string) =>
    `${provider} stays linked: it is your only way in. Set a password first (we mail you a link), then unlink it.`,
} as const;

/**
 * The account's sign-in methods (docs/sso.md): its password and its linked identity providers, each of which can be
 * unlinked unless that leaves no way in or the account's domain requires it. The account is always the session's:
 * an identity of another account is a 404, whatever its id.
 */
@Controller('sign-in-methods')
@UseGuards(SignedInGuard)
export class SignInMethodsController {
  constructor(
    private readonly links: IdentityLinks,
    private readonly providers: PortalIdentityProviders,
    private readonly audit: SignInAudit,
  ) {}

  @Get()
  async page(@Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    renderSsoView(response, 'sign-in-methods', await this.model(request));
  }

  /**
   * "Link <provider>": the provider's sign-in, started by the signed-in account (a form: its CSRF token, so no other
   * site can start it), whose callback links the identity to this account (ProviderSignInController).
   */
  @Post('link/:provider')
  async link(@Param('provider') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const provider = this.providers.find(id);
    if (!provider) throw new NotFoundException('No such identity provider.');
    let started: Awaited<ReturnType<typeof provider.client.start>>;
    try {
      started = await provider.client.start(this.providers.callbackUri(id));
    } catch (error) {
      if (!(error instanceof ProviderUnreachable)) throw error;
      const failed = `${provider.settings.name} could not be reached, so nothing was linked. Try again in a minute.`;
      return renderSsoView(response, 'sign-in-methods', { ...(await this.model(request)), failed }, 503);
    }
    request.session.providerSignIn = {
      ...started.pending,
      providerId: id,
      startedAt: Date.now(),
      linkTo: request.account.id,
    };
    await saveSession(request);
    response.redirect(303, started.url);
  }

  @Get(':id/unlink')
  async confirm(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const identity = await this.ownIdentity(request, id);
    const provider = this.providerName(identity);
    renderSsoView(response, 'unlink-identity', {
      title: `Unlink ${provider}`,
      provider,
      email: identity.email,
      action: `/sign-in-methods/${identity.id}/unlink`,
    });
  }

  @Post(':id/unlink')
  @HttpCode(200)
  async unlink(@Param('id') id: string, @Req() request: SignedInRequest, @Res() response: Response): Promise<void> {
    const outcome: UnlinkOutcome = IDENTITY_ID.test(id)
      ? await this.links.unlink(request.account.id, id)
      : { code: 'NOT_FOUND' };
    if (outcome.code === 'NOT_FOUND') throw new NotFoundException(NO_SUCH_IDENTITY);
    if (outcome.code !== 'UNLINKED') {
      const failed = REFUSED[outcome.code](this.providerName(outcome.identity));
      return renderSsoView(response, 'sign-in-methods', { ...(await this.model(request)), failed }, 409);
    }
    const { identity } = outcome;
    // A session signed in with this identity no longer names it at its sign-out.
    if (request.session.identity?.issuer === identity.issuer && request.session.identity.subject === identity.subject)
      delete request.session.identity;
    this.audit.report({ kind: 'identity-unlinked', ...auditedPerson(personLabel(identity), clientBlock(request)) });
    setFlash(request, 'success', `${this.providerName(identity)} no longer signs you in to this account.`);
    await redirectAfterSave(request, response, '/sign-in-methods');
  }

  private async model(request: SignedInRequest): Promise<SignInMethodsView> {
    const account = request.account;
    const identities = await this.links.identitiesOf(account.id);
    const required = this.links.requiredProviderOf(account);
    const rows = identities.map((identity): LinkedIdentityRow => {
      const provider = this.providerName(identity);
      const row = { id: identity.id, provider, email: identity.email, linkedAt: identity.createdAt.toISOString() };
      // What the POST would refuse, said beside the identity instead of a button that cannot work.
      if (required && this.links.providerOf(identity) === required)
        return { ...row, keptBecause: KEPT_BECAUSE.REQUIRED_BY_DOMAIN(required.name) };
      if (account.passwordHash === null && identities.length === 1)
        return { ...row, keptBecause: KEPT_BECAUSE.LAST_SIGN_IN_METHOD() };
      return { ...row, unlinkHref: `/sign-in-methods/${identity.id}/unlink` };
    });
    const linked = new Set(identities.map((identity) => this.links.providerOf(identity)?.id));
    return {
      title: 'Sign-in methods',
      email: account.email,
      password: account.passwordHash !== null ? 'set' : required ? 'provider-only' : 'none',
      ...(required ? { requiredProvider: required.name } : {}),
      identities: rows,
      linkable: this.links
        .configuredProviders()
        .filter((provider) => !linked.has(provider.id))
        .map((provider) => ({ name: provider.name, action: `/sign-in-methods/link/${provider.id}` })),
      providers: this.links.configuredProviders().length > 0 || rows.length > 0,
    };
  }

  private async ownIdentity(request: SignedInRequest, id: string): Promise<AccountIdentityEntity> {
    const identity = IDENTITY_ID.test(id)
      ? (await this.links.identitiesOf(request.account.id)).find((candidate) => candidate.id === id)
      : undefined;
    if (!identity) throw new NotFoundException(NO_SUCH_IDENTITY);
    return identity;
  }

  private providerName(identity: AccountIdentityEntity): string {
    return this.links.providerOf(identity)?.name ?? identity.issuer;
  }
}
