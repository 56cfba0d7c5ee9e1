import { securityHeaders } from './security-headers';

describe('securityHeaders', () => {
  const csp = () => securityHeaders().find(([name]) => name.toLowerCase() === 'content-security-policy')?.[1] ?? '';

  it("keeps helmet's CSP: scripts and styles from this origin only", () => {
    expect(csp()).toContain("default-src 'self'");
    expect(csp()).toContain("script-src 'self'");
  });

  it('does not ask browsers to upgrade to https, which the apps do not speak', () => {
    expect(csp()).not.toContain('upgrade-insecure-requests');
  });
});
