import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, GatewayUnderTest, mintKey, startGateway } from './support/gateway';
import { freePort } from '../scripts/free-port';
import { RunningPets, startPetsService } from './support/pets-service';

const PRISM = join(__dirname, '../node_modules/.bin/prism');

interface Proxy {
  url: string;
  process: ChildProcess;
}

/** Stoplight Prism in proxy mode in front of the real gateway: it validates every request and response. */
async function startPrism(documentFile: string, upstream: string, errors: boolean): Promise<Proxy> {
  const port = await freePort();
  const child = spawn(PRISM, ['proxy', documentFile, upstream, '--port', String(port), '--host', '127.0.0.1', ...(errors ? ['--errors'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Prism is listening')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`Prism did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `http://127.0.0.1:${port}`, process: child };
}

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** An answer the gateway gave and Prism let through: not one of Prism's own problem+json errors. */
function expectFromGateway(answer: Answer, status: number, code?: string): void {
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(JSON.stringify(answer.body)).not.toContain('stoplight.io/prism/errors');
  expect(answer.status).toBe(status);
  if (code) expect((answer.body as { code: string }).code).toBe(code);
}

/** Violations Prism found in the gateway's response (without --errors it reports them in sl-violations). */
function responseViolations(answer: Answer): unknown[] {
  const header = answer.headers.get('sl-violations');
  const violations = header ? (JSON.parse(header) as Array<{ location: string[] }>) : [];
  return violations.filter((v) => v.location[0] === 'response');
}

/**
 * The served document tells client generators the truth: a validating proxy (Prism, --errors) in front of the
 * real gateway finds no difference between what the document says and what the gateway answers.
 * (413 cannot be produced through Prism: it re-serialises the JSON body it forwards, so a valid NewPet never
 * reaches 16 KiB; the ajv contract check covers it in the gateway's own tests.)
 */
(existsSync(PRISM) ? describe : describe.skip)('the OpenAPI document, checked by Stoplight Prism', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let strict: Proxy;
  let reporting: Proxy;
  let doctored: Proxy;
  let key: string;
  let limitedKey: string;
  const clock = new FakeClock();

  beforeAll(async () => {
    pets = await startPetsService();
    gateway = await startGateway({ petsUrl: pets.url, clock });
    key = await mintKey(gateway, 'business', 'prism');
    limitedKey = await mintKey(gateway, 'enterprise', 'prism-limited', { perMinute: 2, perDay: 1000 });
    const dir = mkdtempSync(join(tmpdir(), 'petstore-prism-'));
    const document = (await (await fetch(`${gateway.url}/docs-json`)).json()) as {
      components: { schemas: { Pet: { required: string[]; properties: Record<string, unknown> } } };
    };
    const served = join(dir, 'openapi.json');
    writeFileSync(served, JSON.stringify(document));
    // The same document with a lie in it (every Pet has a colour): Prism must catch it, or this test proves nothing.
    document.components.schemas.Pet.required.push('colour');
    document.components.schemas.Pet.properties.colour = { type: 'string' };
    const lying = join(dir, 'lying.json');
    writeFileSync(lying, JSON.stringify(document));
    [strict, reporting, doctored] = await Promise.all([
      startPrism(served, `${gateway.url}/v1`, true),
      startPrism(served, `${gateway.url}/v1`, false),
      startPrism(lying, `${gateway.url}/v1`, true),
    ]);
  }, 120_000);
  afterAll(async () => {
    for (const proxy of [strict, reporting, doctored]) proxy?.process.kill('SIGTERM');
    await gateway?.close();
    await pets?.close();
  });

  const auth = (apiKey = key) => ({ authorization: `Bearer ${apiKey}` });
  const json = (apiKey = key) => ({ ...auth(apiKey), 'content-type': 'application/json' });

  it('catches a response that breaks the document (the check is real)', async () => {
    const answer = await send(`${doctored.url}/pets`, { method: 'POST', headers: json(), body: JSON.stringify({ name: 'Rex', categoryId: 1 }) });
    expect(JSON.stringify(answer.body)).toContain('stoplight.io/prism/errors#VIOLATIONS');
  });

  it('lets every successful answer through: listPets, createPet, getPet (deprecated, with its headers)', async () => {
    const created = await send(`${strict.url}/pets`, { method: 'POST', headers: json(), body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }) });
    expectFromGateway(created, 201);
    expectFromGateway(await send(`${strict.url}/pets?limit=5&status=available`, { headers: auth() }), 200);
    expectFromGateway(await send(`${strict.url}/pets/${(created.body as { id: number }).id}`, { headers: auth() }), 200);
  });

  it('lets the error answers of valid requests through: 404, 429', async () => {
    expectFromGateway(await send(`${strict.url}/pets/987654321`, { headers: auth() }), 404, 'NOT_FOUND');
    for (let i = 0; i < 2; i += 1) expectFromGateway(await send(`${strict.url}/pets?limit=1`, { headers: auth(limitedKey) }), 200);
    const limited = await send(`${strict.url}/pets?limit=1`, { headers: auth(limitedKey) });
    expectFromGateway(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('reports no response violation on deliberately bad requests: 400, 401, 415', async () => {
    const answers = [
      await send(`${reporting.url}/pets?limit=0`, { headers: auth() }),
      await send(`${reporting.url}/pets`),
      await send(`${reporting.url}/pets`, { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: 'Rex' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 401, 415]);
    for (const answer of answers) expect(responseViolations(answer)).toEqual([]);
  });

  it('lets 410 through once getPet is past its sunset', async () => {
    clock.set(Date.parse('2031-01-01T00:00:00Z'));
    try {
      expectFromGateway(await send(`${strict.url}/pets/1`, { headers: auth() }), 410, 'GONE');
    } finally {
      clock.reset();
    }
  });

  it('lets 503 with Retry-After through when the pets service is gone', async () => {
    await pets.app.close();
    const answer = await send(`${strict.url}/pets`, { headers: auth() });
    expectFromGateway(answer, 503, 'SERVICE_UNAVAILABLE');
    expect(answer.headers.get('retry-after')).toBe('5');
  });
});
