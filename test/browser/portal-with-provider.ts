import { PeopleIdentityProvider } from '../support/identity-provider-people';
import { PortalStack, startPortalStack } from '../support/portal';

/** The company's provider the portal's SSO browser tests sign in with (the demo people of the stand-in). */
export const PROVIDER = 'Company SSO';
export const PROVIDER_ID = 'company';
export const CLIENT_ID = 'petstore-portal';

/**
 * A portal whose developers sign in with a real oidc-provider (PORTAL_OIDC_PROVIDERS: `company.example` must use
 * it), its confidential client registered at the provider with the portal's callback. The tests of
 * `portal-sso` and `portal-sign-in-methods` stand on it; `idp` takes more clients when a test needs them.
 */
export async function startPortalWithProvider(): Promise<{
  idp: PeopleIdentityProvider;
  stack: PortalStack;
  portalUrl: string;
  /** The portal's callback: the redirect URI its client is registered with. */
  callback: string;
  close(): Promise<void>;
}> {
  const idp = await PeopleIdentityProvider.start();
  const secret = 'portal-client-secret-for-the-tests';
  let stack: PortalStack | undefined;
  try {
    stack = await startPortalStack({
      portalEnv: {
        PORTAL_OIDC_PROVIDERS: JSON.stringify([
          {
            id: PROVIDER_ID,
            name: PROVIDER,
            issuer: idp.issuer,
            clientId: CLIENT_ID,
            clientSecret: secret,
            requiredDomains: ['company.example'],
          },
        ]),
      },
    });
  } catch (error) {
    await idp.stop();
    throw error;
  }
  const portalUrl = stack.portal.url;
  const callback = `${portalUrl}/login/oidc/${PROVIDER_ID}/callback`;
  idp.register({ clientId: CLIENT_ID, clientSecret: secret, redirectUris: [callback], postLogoutRedirectUris: [] });
  const started = stack;
  return {
    idp,
    stack,
    portalUrl,
    callback,
    close: async () => {
      await started.close();
      await idp.stop();
    },
  };
}
