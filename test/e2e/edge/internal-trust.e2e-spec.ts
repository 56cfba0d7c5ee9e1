import { GatewayUnderTest, mintKey, startGateway } from '../../support/gateway';
import { call, expectErrorBody, postJson } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';

const SECRET = 'a-long-shared-internal-secret';

/** With INTERNAL_SECRET set, the pets service answers only the gateway. */
describe('internal trust between the gateway and the pets service', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let key: string;

  beforeAll(async () => {
    pets = await startPetsService({ internalSecret: SECRET });
    gateway = await startGateway({ petsUrl: pets.url, env: { INTERNAL_SECRET: SECRET } });
    key = await mintKey(gateway, 'pro');
  });
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
  });

  it('refuses direct requests without the secret, or with a wrong one, with 401', async () => {
    expectErrorBody(await call(`${pets.url}/pets`), 401, 'UNAUTHORIZED');
    expectErrorBody(
      await call(`${pets.url}/pets`, { headers: { 'x-internal-secret': 'guess-guess-guess-guess' } }),
      401,
      'UNAUTHORIZED',
    );
    expectErrorBody(await postJson(`${pets.url}/pets`, { name: 'Sneaky', categoryId: 1 }), 401, 'UNAUTHORIZED');
  });

  it('serves the gateway, which sends the secret', async () => {
    const created = await postJson(
      `${gateway.url}/v1/pets`,
      { name: 'Trusted', categoryId: 1 },
      { authorization: `Bearer ${key}` },
    );
    expect(created.status).toBe(201);
    const listed = await call(`${gateway.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
    expect((listed.body as Array<{ name: string }>).map((pet) => pet.name)).toEqual(['Trusted']);
  });

  it('keeps health open for orchestrators', async () => {
    expect((await call(`${pets.url}/health/ready`)).status).toBe(200);
  });
});
