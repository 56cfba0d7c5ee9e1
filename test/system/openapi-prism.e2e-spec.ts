import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, GatewayUnderTest, mintKey, startGateway } from '../support/gateway';
import { RunningPets, startPetsService } from '../support/pets-service';
import { expectFromUpstream, prismInstalled, PrismProxy, responseViolations, send, startPrism } from '../support/prism';
import { runIf } from '../support/skip';

/**
 * The served document tells client generators the truth: a validating proxy (Prism, --errors) in front of the
 * real gateway finds no difference between what the document says and what the gateway answers.
 * (413 cannot be produced through Prism: it re-serialises the JSON body it forwards, so a valid NewPet never
 * reaches 16 KiB; the ajv contract check covers it in the gateway's own tests.)
 */
const ifPrism = runIf(prismInstalled, 'Stoplight Prism (node_modules/.bin/prism, from npm ci)');
ifPrism.describe('the OpenAPI document, checked by Stoplight Prism', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let strict: PrismProxy;
  let reporting: PrismProxy;
  let doctored: PrismProxy;
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
    const answer = await send(`${doctored.url}/pets`, {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(JSON.stringify(answer.body)).toContain('stoplight.io/prism/errors#VIOLATIONS');
  });

  it('lets every successful answer through: listPets, createPet, getPet (deprecated, with its headers)', async () => {
    const created = await send(`${strict.url}/pets`, {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }),
    });
    expectFromUpstream(created, 201);
    expectFromUpstream(await send(`${strict.url}/pets?limit=5&status=available`, { headers: auth() }), 200);
    expectFromUpstream(
      await send(`${strict.url}/pets/${(created.body as { id: number }).id}`, { headers: auth() }),
      200,
    );
  });

  it('lets the error answers of valid requests through: 404, 429', async () => {
    expectFromUpstream(await send(`${strict.url}/pets/987654321`, { headers: auth() }), 404, 'NOT_FOUND');
    for (let i = 0; i < 2; i += 1)
      expectFromUpstream(await send(`${strict.url}/pets?limit=1`, { headers: auth(limitedKey) }), 200);
    const limited = await send(`${strict.url}/pets?limit=1`, { headers: auth(limitedKey) });
    expectFromUpstream(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('reports no response violation on deliberately bad requests: 400, 401, 415', async () => {
    const answers = [
      await send(`${reporting.url}/pets?limit=0`, { headers: auth() }),
      await send(`${reporting.url}/pets`),
      await send(`${reporting.url}/pets`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'text/plain' },
        body: 'Rex',
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 401, 415]);
    for (const answer of answers) expect(responseViolations(answer)).toEqual([]);
  });

  it('lets 410 through once getPet is past its sunset', async () => {
    clock.set(Date.parse('2031-01-01T00:00:00Z'));
    try {
      expectFromUpstream(await send(`${strict.url}/pets/1`, { headers: auth() }), 410, 'GONE');
    } finally {
      clock.reset();
    }
  });

  it('lets 503 with Retry-After through when the pets service is gone', async () => {
    await pets.app.close();
    const answer = await send(`${strict.url}/pets`, { headers: auth() });
    expectFromUpstream(answer, 503, 'SERVICE_UNAVAILABLE');
    expect(answer.headers.get('retry-after')).toBe('5');
  });
});
