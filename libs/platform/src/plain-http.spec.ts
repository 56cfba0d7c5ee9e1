import { plainHttpAllowed } from './plain-http';

describe('plainHttpAllowed', () => {
  const at = (href: string) => new URL(href);

  it('takes https anywhere, and plain http anywhere outside production', () => {
    expect(plainHttpAllowed(at('https://login.example.com'), true)).toBe(true);
    expect(plainHttpAllowed(at('http://login.example.com'), false)).toBe(true);
  });

  it('takes plain http in production on loopback names only', () => {
    for (const href of ['http://127.0.0.1:3005', 'http://localhost:3005', 'http://[::1]:3005'])
      expect(plainHttpAllowed(at(href), true)).toBe(true);
    for (const href of ['http://login.example.com', 'http://10.0.0.5', 'http://idp.localhost:3005', 'http://127.0.0.2'])
      expect(plainHttpAllowed(at(href), true)).toBe(false);
  });

  it('takes plain http in production to a provider the operator marked insecureHttp', () => {
    expect(plainHttpAllowed(at('http://idp.localhost:3005'), true, true)).toBe(true);
  });
});
