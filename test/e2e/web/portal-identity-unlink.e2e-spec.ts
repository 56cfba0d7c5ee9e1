import { randomUUID } from 'node:crypto';
import { SignInAudit } from '@app/web';
import { DataSource } from 'typeorm';
import { AccountEntity } from '../../../apps/portal/src/accounts/account.entity';
import { hashPassword } from '../../../apps/portal/src/credentials/passwords';
import { AccountIdentityEntity } from '../../../apps/portal/src/sso/account-identity.entity';
import { IdentityLinks } from '../../../apps/portal/src/sso/identity-links';
import { adminCall } from '../../support/gateway';
import { PortalStack, startPortalStack } from '../../support/portal';
import { PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';
const COMPANY = 'https://login.company.example';
const OTHER = 'https://login.other.example';
let counter = 0;
const newEmail = (label: string, domain = 'example.com') => `${label}-${Date.now()}-${(counter += 1)}@${domain}`;

/**
 * Unlinking an identity provider from a portal account (docs/sso.md, "Sign-in methods"), on two portal instances
 * over one database: never the last way in, even when both of an account's identities are unlinked at once through
 * the two instances; never the provider the account's domain requires; never another account's identity; each
 * unlink in the admin audit, naming the person.
 */
describe('portal: unlinking an identity provider from an account', () => {
  let stack: PortalStack;
  let data: DataSource;

  beforeAll(async () => {
    stack = await startPortalStack({
      instances: 2,
      portalEnv: {
        PORTAL_THROTTLE_ADDRESS_LIMIT: '10000',
        PORTAL_OIDC_PROVIDERS: JSON.stringify([
          {
            id: 'company',
            name: 'Company SSO',
            issuer: COMPANY,
            clientId: 'portal',
            requiredDomains: ['company.example'],
          },
          { id: 'other', name: 'Other SSO', issuer: OTHER, clientId: 'portal' },
        ]),
      },
    });
    data = stack.portal.app.get(DataSource);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  /** A verified account (with a password or without), its consumer named, and its identities at `issuers`. */
  async function account(email: string, password: string | null, issuers: string[]) {
    const id = randomUUID();
    await data.getRepository(AccountEntity).insert({
      id,
      email,
      passwordHash: password === null ? null : await hashPassword(password),
      verifiedAt: new Date(),
      consumerName: `portal-${id.slice(0, 8)}`,
    });
    const identities: string[] = [];
    for (const issuer of issuers) {
      const identity = randomUUID();
      await data
        .getRepository(AccountIdentityEntity)
        .insert({ id: identity, accountId: id, issuer, subject: `sub-${identity.slice(0, 8)}`, email });
      identities.push(identity);
    }
    return { id, identities };
  }
  const left = (accountId: string) => data.getRepository(AccountIdentityEntity).countBy({ accountId });

  it("never unlinks a passwordless account's last identity, even when both are unlinked at once on two instances", async () => {
    const [first, second] = stack.portals.map((portal) => portal.app.get(IdentityLinks));
    for (let round = 0; round < 10; round += 1) {
      const { id, identities } = await account(newEmail('both-at-once'), null, [COMPANY, OTHER]);
      const outcomes = await Promise.all([first.unlink(id, identities[0]), second.unlink(id, identities[1])]);
      expect(outcomes.map((outcome) => outcome.code).sort()).toEqual(['LAST_SIGN_IN_METHOD', 'UNLINKED']);
      expect(await left(id)).toBe(1);
    }
  });

  it("keeps the provider the account's domain requires, and finds no other account's identity", async () => {
    const links = stack.portal.app.get(IdentityLinks);
    const developer = await account(newEmail('dev', 'company.example'), null, [COMPANY, OTHER]);
    expect(await links.unlink(developer.id, developer.identities[0])).toMatchObject({
      code: 'REQUIRED_BY_DOMAIN',
      provider: { id: 'company' },
    });
    const stranger = await account(newEmail('stranger'), PASSWORD, [OTHER]);
    expect(await links.unlink(stranger.id, developer.identities[1])).toEqual({ code: 'NOT_FOUND' });
    // The other provider is not the domain's: it may go, the required one stays.
    expect(await links.unlink(developer.id, developer.identities[1])).toMatchObject({ code: 'UNLINKED' });
    expect(await left(developer.id)).toBe(1);
    expect(await left(stranger.id)).toBe(1);
  });

  it('lets a signed-in developer unlink a provider on the page, with the audit naming them; refuses the rest with 404 and 409', async () => {
    const email = newEmail('page');
    const mine = await account(email, PASSWORD, [OTHER]);
    const theirs = await account(newEmail('theirs'), PASSWORD, [OTHER]);
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/login', { email, password: PASSWORD })).status).toBe(303);

    const page = await developer.get('/sign-in-methods');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Your account has a password.');
    expect(page.text).toContain(`/sign-in-methods/${mine.identities[0]}/unlink`);
    // Another account's identity, and no identity at all: 404 on the confirmation and on the POST.
    expect((await developer.get(`/sign-in-methods/${theirs.identities[0]}/unlink`)).status).toBe(404);
    const confirm = `/sign-in-methods/${mine.identities[0]}/unlink`;
    expect((await developer.submit(confirm, {}, `/sign-in-methods/${theirs.identities[0]}/unlink`)).status).toBe(404);
    expect((await developer.submit(confirm, {}, '/sign-in-methods/not-an-id/unlink')).status).toBe(404);
    expect(await left(theirs.id)).toBe(1);

    const unlinked = await developer.submitAndFollow(confirm, {});
    expect(unlinked.posted.status).toBe(303);
    expect(unlinked.text).toContain('Other SSO no longer signs you in to this account.');
    expect(unlinked.text).toContain('None is linked.');
    expect(await left(mine.id)).toBe(0);
    // Again: it is gone.
    expect((await developer.get(confirm)).status).toBe(404);

    await stack.portal.app.get(SignInAudit).drain();
    const rows = await adminCall(stack.gateway, 'GET', '/audit?action=user.identity-unlinked&order=desc&limit=50');
    const subjects = (rows.body as { items: { onBehalfOf: string | null }[] }).items.map((row) => row.onBehalfOf);
    expect(subjects).toContain(`account:${email} (sub-${mine.identities[0].slice(0, 8)} at ${OTHER})`);
  });

  it('answers 409 with the reason when the last way in is unlinked by a form posted anyway', async () => {
    // A password account signs in, then its password goes (as a provider's takeover leaves an account).
    const email = newEmail('last');
    const mine = await account(email, PASSWORD, [OTHER]);
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/login', { email, password: PASSWORD })).status).toBe(303);
    const confirm = `/sign-in-methods/${mine.identities[0]}/unlink`;
    await data.getRepository(AccountEntity).update({ id: mine.id }, { passwordHash: null });
    const refused = await developer.submit(confirm, {});
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('Other SSO stays linked: it is your only way in.');
    expect(await left(mine.id)).toBe(1);
  });
});

describe('portal: the sign-in methods of a portal without identity providers', () => {
  let stack: PortalStack;
  beforeAll(async () => {
    stack = await startPortalStack({ portalEnv: { PORTAL_THROTTLE_ADDRESS_LIMIT: '10000' } });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('shows the password only: no providers section, nothing to link', async () => {
    const email = newEmail('no-providers');
    const data = stack.portal.app.get(DataSource);
    const id = randomUUID();
    await data.getRepository(AccountEntity).insert({
      id,
      email,
      passwordHash: await hashPassword(PASSWORD),
      verifiedAt: new Date(),
      consumerName: `portal-${id.slice(0, 8)}`,
    });
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/login', { email, password: PASSWORD })).status).toBe(303);
    const page = await developer.get('/sign-in-methods');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Your account has a password.');
    expect(page.text).not.toContain('Identity providers');
    expect(page.text).not.toContain('/sign-in-methods/link/');
  });
});
