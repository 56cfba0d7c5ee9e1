import { randomUUID } from 'node:crypto';
import { isUniqueViolation } from '@app/database';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccountEntity } from '../accounts/account.entity';
import { AccountsService } from '../accounts/accounts.service';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { PortalOidcProvider, providerRequiredFor } from '../config/portal-oidc.config';
import { isSingleAddress, normalizeEmail } from '../credentials/account-input';
import { AccountIdentityEntity } from './account-identity.entity';

/** The person a provider signed in: what its checked ID token says (issuer, subject, email). */
export interface ProviderPerson {
  issuer: string;
  subject: string;
  /** Lower-cased, as accounts store it. */
  email: string;
  emailVerified: boolean;
}

/** The claims of a checked ID token as the portal reads them. */
export function personOf(
  issuer: string,
  claims: { sub: string; email?: unknown; email_verified?: unknown },
): ProviderPerson {
  return {
    issuer,
    subject: claims.sub,
    email: normalizeEmail(claims.email),
    emailVerified: claims.email_verified === true,
  };
}

/** The audit's name for a provider's person: `<email> (<subject> at <issuer>)`, as the console's rows name operators. */
export function personLabel(person: { email: string; subject: string; issuer: string }): string {
  return `${person.email} (${person.subject} at ${person.issuer})`;
}

/** What unlinking an identity comes to, by code (the page's sentence is chosen by it). */
export type UnlinkOutcome =
  | { code: 'UNLINKED'; identity: AccountIdentityEntity }
  /** No such identity of this account (another account's, or unlinked already). */
  | { code: 'NOT_FOUND' }
  /** The account's email domain must sign in with this identity's provider (requiredDomains). */
  | { code: 'REQUIRED_BY_DOMAIN'; identity: AccountIdentityEntity; provider: PortalOidcProvider }
  /** No password and no other identity: the account could not be signed in to any more. */
  | { code: 'LAST_SIGN_IN_METHOD'; identity: AccountIdentityEntity };

const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** What a provider sign-in comes to, by code (the controller chooses the page by it). */
export type ProviderSignInOutcome =
  /** KNOWN: the identity was linked before; CREATED: a new account; CLAIMED: an unverified sign-up taken over. */
  | { code: 'SIGNED_IN'; account: AccountEntity; how: 'KNOWN' | 'CREATED' | 'CLAIMED' }
  /** A verified account has the email and not this identity: its owner must prove it first. */
  | { code: 'PROOF_REQUIRED'; account: AccountEntity }
  | { code: 'REFUSED'; reason: 'EMAIL_NOT_VERIFIED' | 'EMAIL_NOT_ACCEPTED' | 'DOMAIN_OF_ANOTHER_PROVIDER' };

/**
 * Provider identities and the accounts they sign in to (docs/sso.md, "Accounts"). The identity (issuer + subject) is
 * the key, never the email. A new identity gets an account only for an email its provider asserts verified: a new
 * account, or an unverified sign-up taken over (its pending password dropped: whoever pre-registered the address gets
 * nothing). A verified account with that email is linked only after its owner proves it (its password, or a mailed
 * link opened in the same browser): a provider identity never takes an account by its email alone.
 */
@Injectable()
export class IdentityLinks {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
  ) {}

  async signIn(provider: PortalOidcProvider, person: ProviderPerson): Promise<ProviderSignInOutcome> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const linked = await this.linkedAccount(person);
      if (linked) return { code: 'SIGNED_IN', account: linked, how: 'KNOWN' };
      if (!person.emailVerified) return { code: 'REFUSED', reason: 'EMAIL_NOT_VERIFIED' };
      if (!isSingleAddress(person.email)) return { code: 'REFUSED', reason: 'EMAIL_NOT_ACCEPTED' };
      // A domain another provider is required for: this one cannot vouch for that company's people.
      const required = providerRequiredFor(person.email, this.config.oidcProviders);
      if (required && required.id !== provider.id) return { code: 'REFUSED', reason: 'DOMAIN_OF_ANOTHER_PROVIDER' };
      try {
        const outcome = await this.dataSource.transaction(async (manager) => {
          const taken = await this.accounts.takeForProvider(manager, person.email);
          if (!taken) return undefined;
          await manager.insert(AccountIdentityEntity, this.identityRow(taken.account.id, person));
          return taken;
        });
        if (outcome)
          return { code: 'SIGNED_IN', account: outcome.account, how: outcome.created ? 'CREATED' : 'CLAIMED' };
        const existing = await this.accounts.findByEmail(person.email);
        if (existing?.verifiedAt) return { code: 'PROOF_REQUIRED', account: existing };
      } catch (error) {
        // Raced with a sign-up or another sign-in of the same person: look again.
        if (!isUniqueViolation(error)) throw error;
      }
    }
    throw new Error('A provider sign-in kept racing with other changes of its account.');
  }

  /**
   * Links `person` to `accountId` once its owner proved the account; true when it is linked (now or by a sign-in
   * racing with this one), false when the identity is another account's.
   */
  async link(accountId: string, person: ProviderPerson): Promise<boolean> {
    try {
      await this.dataSource.getRepository(AccountIdentityEntity).insert(this.identityRow(accountId, person));
      return true;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return (await this.linkedAccount(person))?.id === accountId;
    }
  }

  /** The account's linked identities, oldest first. */
  identitiesOf(accountId: string): Promise<AccountIdentityEntity[]> {
    return this.dataSource
      .getRepository(AccountIdentityEntity)
      .find({ where: { accountId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Every provider developers may sign in with, in the configuration's order. */
  configuredProviders(): readonly PortalOidcProvider[] {
    return this.config.oidcProviders;
  }

  /** The configured provider whose issuer an identity came from, if it is still configured. */
  providerOf(identity: { issuer: string }): PortalOidcProvider | undefined {
    return this.config.oidcProviders.find((provider) => sameIssuer(provider.issuer, identity.issuer));
  }

  /** The provider the account's email domain must sign in with (requiredDomains), if any. */
  requiredProviderOf(account: { email: string }): PortalOidcProvider | undefined {
    return providerRequiredFor(account.email, this.config.oidcProviders);
  }

  /**
   * Unlinks one of the account's identities, unless that leaves no way in (no password and no other identity) or
   * the account's domain requires that provider. The account's row is locked first: two unlinks of an account's
   * last two identities, at once on two instances, cannot both see the other one still there.
   */
  async unlink(accountId: string, identityId: string): Promise<UnlinkOutcome> {
    return this.dataSource.transaction(async (manager) => {
      const account = await manager
        .getRepository(AccountEntity)
        .createQueryBuilder('account')
        .setLock('pessimistic_write')
        .where('account.id = :accountId', { accountId })
        .getOne();
      if (!account) return { code: 'NOT_FOUND' };
      const identities = await manager.find(AccountIdentityEntity, { where: { accountId } });
      const identity = identities.find((candidate) => candidate.id === identityId);
      if (!identity) return { code: 'NOT_FOUND' };
      const required = this.requiredProviderOf(account);
      if (required && sameIssuer(required.issuer, identity.issuer))
        return { code: 'REQUIRED_BY_DOMAIN', identity, provider: required };
      if (account.passwordHash === null && identities.length === 1) return { code: 'LAST_SIGN_IN_METHOD', identity };
      await manager.delete(AccountIdentityEntity, { id: identity.id });
      return { code: 'UNLINKED', identity };
    });
  }

  private async linkedAccount(person: ProviderPerson): Promise<AccountEntity | null> {
    const identity = await this.dataSource
      .getRepository(AccountIdentityEntity)
      .findOneBy({ issuer: person.issuer, subject: person.subject });
    return identity ? this.accounts.find(identity.accountId) : null;
  }

  private identityRow(accountId: string, person: ProviderPerson): AccountIdentityEntity {
    return {
      id: randomUUID(),
      accountId,
      issuer: person.issuer,
      subject: person.subject,
      email: person.email,
    } as AccountIdentityEntity;
  }
}
