import { OidcIdentityProvider } from '@app/web';
import type { PortalConfig } from '../config/portal.config';
import type { PortalOidcProvider } from '../config/portal-oidc.config';

/** A configured provider and the portal's client at it. */
export interface PortalIdentityProvider {
  settings: PortalOidcProvider;
  client: OidcIdentityProvider;
}

/** The providers developers may sign in with (PORTAL_OIDC_PROVIDERS), by the id their URLs name. */
export class PortalIdentityProviders {
  private readonly byId: ReadonlyMap<string, PortalIdentityProvider>;

  constructor(private readonly config: PortalConfig) {
    this.byId = new Map(
      config.oidcProviders.map((settings) => [settings.id, { settings, client: new OidcIdentityProvider(settings) }]),
    );
  }

  find(id: string): PortalIdentityProvider | undefined {
    return this.byId.get(id);
  }

  /** Where the provider sends the person back: PORTAL_PUBLIC_URL's (the address registered at the provider). */
  callbackUri(id: string): string {
    return `${this.config.publicUrl}${this.config.basePath}/login/oidc/${id}/callback`;
  }
}
