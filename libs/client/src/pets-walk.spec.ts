import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { nextLinkOf, Pet, PetsClient } from './pets-client';

type Answer = (req: IncomingMessage, res: ServerResponse, origin: string) => void;

/** A real HTTP server answering each request with the next scripted answer, recording what it was asked. */
async function scripted(script: Answer[]) {
  const asked: Array<{ url: string; authorization?: string }> = [];
  let origin = '';
  const server: Server = createServer((req, res) => {
    const answer = script[Math.min(asked.length, script.length - 1)];
    asked.push({ url: req.url!, authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => answer(req, res, origin));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { baseUrl: `${origin}/v1`, asked, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const pets = (...ids: number[]): Pet[] => ids.map((id) => ({ id, name: `Pet ${id}`, categoryId: 1, status: 'sold' }));
const page =
  (body: Pet[], next?: (origin: string) => string): Answer =>
  (_req, res, origin) =>
    res
      .writeHead(200, {
        'content-type': 'application/json',
        ...(next ? { link: `<${next(origin)}>; rel="next"` } : {}),
      })
      .end(JSON.stringify(body));
const sleeps: number[] = [];
const options = { apiKey: 'k', sleep: async (ms: number) => void sleeps.push(ms), random: () => 0.5 };

async function collect(iterable: AsyncIterable<Pet>): Promise<number[]> {
  const ids: number[] = [];
  for await (const pet of iterable) ids.push(pet.id);
  return ids;
}

describe('PetsClient.pets()', () => {
  beforeEach(() => sleeps.splice(0));

  it('follows rel="next" page after page, with the key, and stops on the page without one', async () => {
    const server = await scripted([
      page(pets(1, 2), (o) => `${o}/v1/pets?limit=2&status=sold&after=c1`),
      page(pets(3, 4), (o) => `${o}/v1/pets?limit=2&status=sold&after=c2`),
      page(pets(5)),
    ]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    expect(await collect(client.pets({ status: 'sold', limit: 2 }))).toEqual([1, 2, 3, 4, 5]);
    expect(server.asked.map((a) => a.url)).toEqual([
      '/v1/pets?limit=2&status=sold',
      '/v1/pets?limit=2&status=sold&after=c1',
      '/v1/pets?limit=2&status=sold&after=c2',
    ]);
    for (const a of server.asked) expect(a.authorization).toBe('Bearer k');
    await server.close();
  });

  it('fetches a page only when the loop asks for it', async () => {
    const server = await scripted([page(pets(1, 2), (o) => `${o}/v1/pets?after=c1`), page(pets(3))]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    for await (const pet of client.pets()) {
      expect(pet.id).toBe(1);
      break;
    }
    expect(server.asked).toHaveLength(1);
    await server.close();
  });

  it('resolves a relative next link against the page that carried it', async () => {
    const server = await scripted([page(pets(1), () => '/v1/pets?after=c1'), page(pets(2))]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    expect(await collect(client.pets())).toEqual([1, 2]);
    expect(server.asked[1].url).toBe('/v1/pets?after=c1');
    await server.close();
  });

  it('waits out a 429 in the middle of a walk and carries on where it was', async () => {
    const server = await scripted([
      page(pets(1), (o) => `${o}/v1/pets?after=c1`),
      (_req, res) =>
        res
          .writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' })
          .end('{"code":"RATE_LIMITED","message":"m","status":429}'),
      page(pets(2)),
    ]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    expect(await collect(client.pets())).toEqual([1, 2]);
    expect(sleeps).toEqual([3_000]);
    expect(server.asked.map((a) => a.url)).toEqual(['/v1/pets', '/v1/pets?after=c1', '/v1/pets?after=c1']);
    await server.close();
  });

  it('retries a 503 on a later page and ends with what every page held', async () => {
    const server = await scripted([
      page(pets(1), (o) => `${o}/v1/pets?after=c1`),
      (_req, res) =>
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end('{"code":"SERVICE_UNAVAILABLE","message":"m","status":503}'),
      page(pets(2)),
    ]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    expect(await collect(client.pets())).toEqual([1, 2]);
    expect(sleeps).toHaveLength(1);
    await server.close();
  });

  it.each([
    ['another origin', () => 'http://evil.example/v1/pets?after=c1'],
    ['another scheme', (o: string) => `${o.replace('http:', 'https:')}/v1/pets?after=c1`],
    ['a path outside the base URL', (o: string) => `${o}/internal/pets?after=c1`],
  ])('refuses to send the key to %s', async (_case, next) => {
    const server = await scripted([page(pets(1), next), page(pets(2))]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const pet of client.pets()) seen.push(pet.id);
      })(),
    ).rejects.toThrow(/outside .*: not followed/);
    expect(seen).toEqual([1]);
    expect(server.asked).toHaveLength(1);
    await server.close();
  });

  it('stops with an error instead of looping on a link to the same page', async () => {
    const server = await scripted([page(pets(1), (o) => `${o}/v1/pets?limit=1`)]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    await expect(collect(client.pets({ limit: 1 }))).rejects.toThrow(/repeats the page/);
    await server.close();
  });

  it('passes after on listPets, which still returns one page as a bare array', async () => {
    const server = await scripted([page(pets(7), (o) => `${o}/v1/pets?after=c2`)]);
    const client = new PetsClient({ ...options, baseUrl: server.baseUrl });
    expect(await client.listPets({ limit: 1, after: 'c1' })).toEqual(pets(7));
    expect(server.asked[0].url).toBe('/v1/pets?limit=1&after=c1');
    await server.close();
  });
});

describe('nextLinkOf', () => {
  const here = 'https://api.example.test/v1/pets?limit=2';
  it.each([
    ['<https://api.example.test/v1/pets?after=x>; rel="next"', 'https://api.example.test/v1/pets?after=x'],
    ['</v1/pets?after=x>; rel=next', 'https://api.example.test/v1/pets?after=x'],
    ['<?after=x>; rel="next"', 'https://api.example.test/v1/pets?after=x'],
    ['</v1/pets?after=p>; rel="prev", </v1/pets?after=n>; rel="next"', 'https://api.example.test/v1/pets?after=n'],
    ['</v1/pets?after=n>; title="a, b"; rel="prev NEXT"', 'https://api.example.test/v1/pets?after=n'],
    ['</v1/pets>; rel="successor-version"', undefined],
    ['</v1/pets?after=x>; rel="nextpage"', undefined],
    ['', undefined],
    [null, undefined],
  ])('%j → %s', (field, expected) => {
    expect(nextLinkOf(field, here)).toBe(expected);
  });
});
