import { GET_PET_DEPRECATION } from '@app/contract';
import { FakeClock, mintKey } from '../../support/gateway';
import { call, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

/** Headers whose values are the same for two requests of one consumer in one window (not the date, id or counts). */
const STABLE_HEADERS = [
  'content-type',
  'content-length',
  'content-security-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
  'referrer-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'deprecation',
  'sunset',
  'link',
  'x-ratelimit-limit',
  'ratelimit-policy',
  'www-authenticate',
  'allow',
  'cache-control',
];

/**
 * Every /v1 request takes the one pipeline (apps/gateway/src/pipeline), whatever its form: the three operations
 * in their plain form and in another one (trailing slash, percent-encoding, another case) must answer alike:
 * same status, same body, same header names, same values where values do not vary per request.
 */
describe('one operation, any form of its request: the same answer', () => {
  const clock = new FakeClock();
  const stack = withStack({ pets: {}, database: true, gateway: { clock } });

  let key: string;
  let petId: number;

  beforeAll(async () => {
    key = await mintKey(stack.gateway, 'business', 'request-forms');
    const created = await call(`${stack.gateway.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Fast', categoryId: 3, status: 'available' }),
    });
    petId = (created.body as { id: number }).id;
  });
  afterEach(() => clock.reset());

  /** Sends the plain form, then the other form; returns both replies. */
  async function both(plain: string, other: string, init: RequestInit = {}): Promise<[Reply, Reply]> {
    const fast = await call(`${stack.gateway.url}${plain}`, init);
    const slow = await call(`${stack.gateway.url}${other}`, init);
    return [fast, slow];
  }

  function expectAlike(fast: Reply, slow: Reply): void {
    expect(fast.status).toBe(slow.status);
    expect([...fast.headers.keys()].sort()).toEqual([...slow.headers.keys()].sort());
    for (const name of STABLE_HEADERS) expect([name, fast.headers.get(name)]).toEqual([name, slow.headers.get(name)]);
    expect(fast.text).toBe(slow.text);
  }

  const auth = () => ({ authorization: `Bearer ${key}` });
  const encodedId = () => `%3${String(petId)[0]}${String(petId).slice(1)}`;

  it('lists alike (and HEAD too)', async () => {
    const [fast, slow] = await both('/v1/pets?limit=2&status=available', '/v1/pets/?limit=2&status=available', {
      headers: auth(),
    });
    expect(fast.status).toBe(200);
    expectAlike(fast, slow);
    const [fastHead, slowHead] = await both('/v1/pets?limit=2', '/v1/PETS?limit=2', {
      method: 'HEAD',
      headers: auth(),
    });
    expect(fastHead.status).toBe(200);
    expectAlike(fastHead, slowHead);
  });

  it('creates alike, and refuses an invalid body alike', async () => {
    const post = (body: string) => ({
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body,
    });
    const [fast, slow] = await both(
      '/v1/pets',
      '/v1/pets/',
      post(JSON.stringify({ name: 'Twin', categoryId: 1, status: 'pending' })),
    );
    expect(fast.status).toBe(201);
    expect(slow.status).toBe(201);
    const strip = (reply: Reply) => ({ ...(reply.body as object), id: 0 });
    expect(strip(fast)).toEqual(strip(slow));
    const [badFast, badSlow] = await both('/v1/pets', '/v1/pets/', post('{"name":'));
    expect(badFast.status).toBe(400);
    expectAlike(badFast, badSlow);
  });

  it('fetches alike with the deprecation headers, and answers 410 alike after the sunset', async () => {
    const [fast, slow] = await both(`/v1/pets/${petId}`, `/v1/pets/${encodedId()}`, { headers: auth() });
    expect(fast.status).toBe(200);
    expect(fast.headers.get('deprecation')).toMatch(/^@\d+$/);
    expectAlike(fast, slow);
    clock.set(GET_PET_DEPRECATION.sunset.getTime() + 1000);
    const [goneFast, goneSlow] = await both(`/v1/pets/${petId}`, `/v1/pets/${encodedId()}`, { headers: auth() });
    expect(goneFast.status).toBe(410);
    expectAlike(goneFast, goneSlow);
  });

  it('refuses a missing or unknown key alike', async () => {
    const [missingFast, missingSlow] = await both('/v1/pets', '/v1/pets/');
    expect(missingFast.status).toBe(401);
    expectAlike(missingFast, missingSlow);
    const unknown = { headers: { authorization: 'Bearer pk_test_thisKeyDoesNotExist0123456789' } };
    const [unknownFast, unknownSlow] = await both(`/v1/pets/${petId}`, `/v1/pets/${encodedId()}`, unknown);
    expect(unknownFast.status).toBe(401);
    expectAlike(unknownFast, unknownSlow);
  });

  it('marks every /v1 answer, in any form, Cache-Control: private, no-store (and only /v1 answers)', async () => {
    const json = { ...auth(), 'content-type': 'application/json' };
    const replies: Array<[string, Reply]> = [];
    for (const [plain, viaRouter, init] of [
      ['/v1/pets?limit=1', '/v1/pets/?limit=1', { headers: auth() }],
      ['/v1/pets?limit=1', '/v1/PETS?limit=1', { method: 'HEAD', headers: auth() }],
      [
        '/v1/pets',
        '/v1/pets/',
        { method: 'POST', headers: json, body: JSON.stringify({ name: 'Stored', categoryId: 1 }) },
      ],
      ['/v1/pets', '/v1/pets/', { method: 'POST', headers: json, body: '{"name":' }],
      [`/v1/pets/${petId}`, `/v1/pets/${encodedId()}`, { headers: auth() }],
      ['/v1/pets', '/v1/pets/', {}],
    ] as Array<[string, string, RequestInit]>) {
      const [fast, slow] = await both(plain, viaRouter, init);
      replies.push(
        [`${init.method ?? 'GET'} ${plain} ${fast.status}`, fast],
        [`${init.method ?? 'GET'} ${viaRouter} ${slow.status}`, slow],
      );
    }
    // Answers no route gives: no such path, wrong method.
    replies.push(['GET /v1/nothing', await call(`${stack.gateway.url}/v1/nothing`, { headers: auth() })]);
    replies.push([
      'DELETE /v1/pets',
      await call(`${stack.gateway.url}/v1/pets`, { method: 'DELETE', headers: auth() }),
    ]);
    expect(new Set(replies.map(([, reply]) => reply.status))).toEqual(new Set([200, 201, 400, 401, 404, 405]));
    for (const [what, reply] of replies)
      expect([what, reply.headers.get('cache-control')]).toEqual([what, 'private, no-store']);
    // Health keeps its own (no-cache, no-store, must-revalidate).
    expect((await call(`${stack.gateway.url}/health/live`)).headers.get('cache-control')).not.toBe('private, no-store');
  });
});
