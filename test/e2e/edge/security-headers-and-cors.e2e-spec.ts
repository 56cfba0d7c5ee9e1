import {
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../../support/gateway';
import { call } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';

/** helmet's headers on both apps; CORS only for the configured origins. */
describe('security headers and CORS', () => {
  let pets: RunningPets;
  let closed: GatewayUnderTest;
  let open: GatewayUnderTest;
  let key: string;
  let database: GatewayTestDatabase;

  beforeAll(async () => {
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    closed = await startGateway({ petsUrl: pets.url, database });
    open = await startGateway({ petsUrl: pets.url, database, env: { CORS_ORIGINS: 'https://app.example.org' } });
    key = await mintKey(closed, 'pro');
  });
  afterAll(async () => {
    await closed?.close();
    await open?.close();
    await database?.drop();
    await pets?.close();
  });

  it.each([
    ['gateway API', () => `${closed.url}/v1/pets`],
    ['gateway docs', () => `${closed.url}/docs`],
    ['pets service', () => `${pets.url}/pets`],
  ])('sends helmet headers on the %s', async (_name, url) => {
    const reply = await call(url(), { headers: { authorization: `Bearer ${key}` } });
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    expect(reply.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(reply.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(reply.headers.get('x-powered-by')).toBeNull();
  });

  it('keeps CORS off unless origins are configured', async () => {
    const reply = await call(`${closed.url}/v1/pets`, {
      headers: { authorization: `Bearer ${key}`, origin: 'https://app.example.org' },
    });
    expect(reply.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows the configured origin, exposing the rate-limit headers, and no other', async () => {
    const preflight = await call(`${open.url}/v1/pets`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.org',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.org');
    const reply = await call(`${open.url}/v1/pets`, {
      headers: { authorization: `Bearer ${key}`, origin: 'https://app.example.org' },
    });
    expect(reply.headers.get('access-control-expose-headers')).toContain('X-RateLimit-Remaining');
    const other = await call(`${open.url}/v1/pets`, {
      headers: { authorization: `Bearer ${key}`, origin: 'https://evil.example.net' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
