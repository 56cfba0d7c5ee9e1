import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { PetsApiError, PetsClient } from './pets-client';

type Script = Array<(req: IncomingMessage, res: ServerResponse) => void>;

/** A real HTTP server that answers each request with the next scripted answer. */
async function scripted(script: Script): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    const answer = script[Math.min(hits, script.length - 1)];
    hits += 1;
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (_req: IncomingMessage, res: ServerResponse) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const error = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { code, message: code, status }, headers);

/** Time that passes only when the client sleeps: the schedule is observed, never waited for. */
function fakeClock() {
  const clock = { now: 0, sleeps: [] as number[] };
  return {
    clock,
    now: () => clock.now,
    sleep: async (ms: number) => {
      clock.sleeps.push(ms);
      clock.now += ms;
    },
  };
}

describe('PetsClient retry schedule', () => {
  it('waits exactly Retry-After on 429, then succeeds', async () => {
    const server = await scripted([error(429, 'RATE_LIMITED', { 'retry-after': '7' }), json(200, [])]);
    const time = fakeClock();
    const client = new PetsClient({ baseUrl: server.url, apiKey: 'k', ...time, random: () => 0.5 });
    await expect(client.listPets()).resolves.toEqual([]);
    expect(time.clock.sleeps).toEqual([7_000]);
    await server.close();
  });

  it('backs off exponentially with full jitter on 503 for idempotent calls, up to the attempt limit', async () => {
    const server = await scripted([error(503, 'SERVICE_UNAVAILABLE')]);
    const time = fakeClock();
    const client = new PetsClient({
      baseUrl: server.url,
      apiKey: 'k',
      ...time,
      random: () => 0.5,
      maxAttempts: 4,
      backoff: { baseMs: 100, capMs: 300 },
    });
    await expect(client.listPets()).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(time.clock.sleeps).toEqual([50, 100, 150]);
    expect(server.hits()).toBe(4);
    await server.close();
  });

  it('gives up when the next wait would pass the total time budget', async () => {
    const server = await scripted([error(429, 'KEY_BANNED', { 'retry-after': '600' })]);
    const time = fakeClock();
    const client = new PetsClient({ baseUrl: server.url, apiKey: 'k', ...time, maxTotalMs: 60_000 });
    await expect(client.listPets()).rejects.toBeInstanceOf(PetsApiError);
    expect(time.clock.sleeps).toEqual([]);
    await server.close();
  });

  it('does not retry createPet after a 503 (the request may have reached the service), but does after a 429', async () => {
    const failing = await scripted([
      error(503, 'SERVICE_UNAVAILABLE'),
      json(201, { id: 1, name: 'Rex', categoryId: 1 }),
    ]);
    const time = fakeClock();
    const client = new PetsClient({ baseUrl: failing.url, apiKey: 'k', ...time });
    await expect(client.createPet({ name: 'Rex', categoryId: 1 })).rejects.toMatchObject({ status: 503 });
    expect(failing.hits()).toBe(1);
    await failing.close();

    const limited = await scripted([
      error(429, 'RATE_LIMITED', { 'retry-after': '1' }),
      json(201, { id: 1, name: 'Rex', categoryId: 1 }),
    ]);
    const again = new PetsClient({ baseUrl: limited.url, apiKey: 'k', ...fakeClock() });
    await expect(again.createPet({ name: 'Rex', categoryId: 1 })).resolves.toEqual({
      id: 1,
      name: 'Rex',
      categoryId: 1,
    });
    await limited.close();
  });

  it('does not retry client errors and returns the typed Error body', async () => {
    const server = await scripted([error(400, 'VALIDATION_FAILED')]);
    const time = fakeClock();
    const client = new PetsClient({ baseUrl: server.url, apiKey: 'k', ...time });
    const failure = await client.listPets({ limit: 1 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PetsApiError);
    expect((failure as PetsApiError).body).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'VALIDATION_FAILED',
      status: 400,
    });
    expect(server.hits()).toBe(1);
    await server.close();
  });
});
