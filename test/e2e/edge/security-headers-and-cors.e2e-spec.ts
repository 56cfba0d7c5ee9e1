import { mintKey } from '../../support/gateway';
import { call } from '../../support/http';
import { withStack } from '../../support/with-stack';

/** helmet's headers on both apps; CORS only for the configured origins. */
describe('security headers and CORS', () => {
  const stack = withStack({
    pets: {},
    database: true,
    gateways: { closed: {}, open: { env: { CORS_ORIGINS: 'https://app.example.org' } } },
  });

  let key: string;

  beforeAll(async () => {
    key = await mintKey(stack.closed, 'pro');
  });

  it.each([
    ['gateway API', () => `${stack.closed.url}/v1/pets`],
    ['gateway docs', () => `${stack.closed.url}/docs`],
    ['pets service', () => `${stack.pets.url}/pets`],
  ])('sends helmet headers on the %s', async (_name, url) => {
    const reply = await call(url(), { headers: { authorization: `Bearer ${key}` } });
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    expect(reply.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(reply.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(reply.headers.get('x-powered-by')).toBeNull();
  });

  it('keeps CORS off unless origins are configured', async () => {
    const reply = await call(`${stack.closed.url}/v1/pets`, {
      headers: { authorization: `Bearer ${key}`, origin: 'https://app.example.org' },
    });
    expect(reply.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows the configured origin, exposing the rate-limit headers, and no other', async () => {
    const preflight = await call(`${stack.open.url}/v1/pets`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.org',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.org');
    const reply = await call(`${stack.open.url}/v1/pets`, {
      headers: { authorization: `Bearer ${key}`, origin: 'https://app.example.org' },
    });
    expect(reply.headers.get('access-control-expose-headers')).toContain('X-RateLimit-Remaining');
    const other = await call(`${stack.open.url}/v1/pets`, {
      headers: { authorization: `Bearer ${key}`, origin: 'https://evil.example.net' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
