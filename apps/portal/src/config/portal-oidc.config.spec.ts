import { portalOidcProvidersOf, providerRequiredFor } from './portal-oidc.config';

const company = {
  id: 'company',
  name: 'Company SSO',
  issuer: 'https://login.company.example',
  clientId: 'petstore-portal',
  clientSecret: 'a-secret-never-printed',
  requiredDomains: ['Company.example'],
};

describe('PORTAL_OIDC_PROVIDERS', () => {
  it('reads providers, with the default scopes and lower-cased domains; unset is none', () => {
    expect(portalOidcProvidersOf(undefined, true)).toEqual([]);
    const [provider] = portalOidcProvidersOf(JSON.stringify([company]), true);
    expect(provider).toEqual({
      ...company,
      scopes: 'openid email',
      insecureHttp: false,
      requiredDomains: ['company.example'],
    });
    expect(providerRequiredFor('dev@COMPANY.example', [provider])).toBe(provider);
    expect(providerRequiredFor('dev@elsewhere.example', [provider])).toBeUndefined();
  });

  it.each([
    ['{', /PORTAL_OIDC_PROVIDERS is not valid JSON/],
    ['{}', /must be a JSON array/],
    [JSON.stringify([{ ...company, id: 'Bad Id' }]), /\[0\]\.id must be/],
    [JSON.stringify([company, company]), /\[1\]\.id "company" is given twice/],
    [JSON.stringify([{ ...company, name: '<b>' }]), /\.name must be/],
    [JSON.stringify([{ ...company, issuer: 'http://login.company.example' }]), /https URL in production/],
    [JSON.stringify([{ ...company, clientId: '' }]), /\.clientId must be/],
    [JSON.stringify([{ ...company, scopes: 'openid groups' }]), /\.scopes must start with openid and ask for email/],
    [JSON.stringify([{ ...company, requiredDomains: ['not a domain'] }]), /\.requiredDomains must be/],
    [JSON.stringify([{ ...company, insecureHttp: 'yes' }]), /\.insecureHttp must be true or false/],
    [JSON.stringify([{ ...company, admin: true }]), /unknown field "admin"/],
    [
      JSON.stringify([company, { ...company, id: 'other', requiredDomains: ['company.example'] }]),
      /"company.example" is already required by "company"/,
    ],
  ])('refuses a wrong value at start-up with one line naming it (%#), never a secret', (raw, message) => {
    let error: Error | undefined;
    try {
      portalOidcProvidersOf(raw, true);
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toContain('a-secret-never-printed');
  });

  it('takes an http issuer on loopback in production, and any http one outside it', () => {
    const loopback = [{ ...company, issuer: 'http://127.0.0.1:9000' }];
    expect(portalOidcProvidersOf(JSON.stringify(loopback), true)).toHaveLength(1);
    const plain = [{ ...company, issuer: 'http://login.company.example' }];
    expect(portalOidcProvidersOf(JSON.stringify(plain), false)).toHaveLength(1);
  });

  it('takes a plain http issuer in production when the provider is marked insecureHttp (compose: idp.localhost)', () => {
    const standIn = [{ ...company, issuer: 'http://idp.localhost:3005', insecureHttp: true }];
    expect(portalOidcProvidersOf(JSON.stringify(standIn), true)[0]).toMatchObject({ insecureHttp: true });
    expect(() => portalOidcProvidersOf(JSON.stringify([{ ...standIn[0], insecureHttp: false }]), true)).toThrow(
      /\[0\]\.issuer must be an https URL in production/,
    );
  });
});
