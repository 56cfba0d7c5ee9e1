import { DeprecationNotice, PetsApiError, PetsClient } from '@petstore/animals-client';
import { mintKey } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

const MINUTE_MS = 2_000; // the gateway's "minute" window, shortened so that the client's wait is short

/** The typed client against the real gateway: it crosses a rate limit by itself, without being banned. */
describe('animals client against the real gateway', () => {
  const stack = withStack({
    pets: {},
    gateway: {
      env: { BAN_THRESHOLD: '2' },
      adjust: (config) => {
        config.rateLimit.windowMs.minute = MINUTE_MS;
      },
    },
  });

  let freeKey: string;

  beforeAll(async () => {
    freeKey = await mintKey(stack.gateway, 'free', 'client-e2e');
  });

  it('creates, lists and fetches pets, warning once about the deprecated getPet', async () => {
    const notices: DeprecationNotice[] = [];
    const client = new PetsClient({
      baseUrl: `${stack.gateway.url}/v1`,
      apiKey: freeKey,
      onDeprecation: (n) => notices.push(n),
    });
    const created = await client.createPet({ name: 'Client Rex', categoryId: 2, status: 'available' });
    expect(created).toEqual({ id: created.id, name: 'Client Rex', categoryId: 2, status: 'available' });
    expect(await client.listPets({ status: 'available', limit: 5 })).toContainEqual(created);
    expect(await client.getPet(created.id)).toEqual(created);
    await client.getPet(created.id);
    expect(notices).toEqual([
      {
        operation: 'getPet',
        deprecation: expect.stringMatching(/^@\d+$/),
        sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
        link: '</v1/pets>; rel="successor-version"',
      },
    ]);
    expect(client.rateLimit).toMatchObject({ limit: 60 });
  });

  it('returns the API error typed, without retrying it', async () => {
    const client = new PetsClient({ baseUrl: `${stack.gateway.url}/v1`, apiKey: freeKey });
    const failure = await client.getPet(9_007_199_254_740_000).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PetsApiError);
    expect((failure as PetsApiError).body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('drives a Free key past its limit: waits for Retry-After and succeeds, never banned', async () => {
    // A key of its own: its minute starts with this test's first request. The file's shared key started its minute
    // in an earlier test, and on a slow machine that minute ended mid-way and no request was refused.
    const ownKey = await mintKey(stack.gateway, 'free', 'client-e2e-limit');
    const sleeps: number[] = [];
    const client = new PetsClient({
      baseUrl: `${stack.gateway.url}/v1`,
      apiKey: ownKey,
      sleep: (ms) => {
        sleeps.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    const results = [];
    for (let i = 0; i < 70; i += 1) results.push(await client.listPets({ limit: 1 }));
    expect(results).toHaveLength(70);
    // It had to wait (the window was spent) and waited as told: once per refusal, each within the window (and the
    // current second, which Retry-After counts from).
    expect(sleeps.length).toBeGreaterThanOrEqual(1);
    expect(sleeps.length).toBeLessThanOrEqual(2);
    for (const ms of sleeps) expect(ms).toBeLessThanOrEqual(MINUTE_MS + 1000);
    expect(client.rateLimit!.remaining).toBeGreaterThanOrEqual(0);
  });
});
