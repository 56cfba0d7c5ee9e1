import { mintKey } from '../../support/gateway';
import { call, expectErrorBody, postJson } from '../../support/http';
import { withStack } from '../../support/with-stack';

const SECRET = 'a-long-shared-internal-secret';

/** With INTERNAL_SECRET set, the pets service answers only the gateway. */
describe('internal trust between the gateway and the pets service', () => {
  const stack = withStack({ pets: { internalSecret: SECRET }, gateway: { env: { INTERNAL_SECRET: SECRET } } });

  let key: string;

  beforeAll(async () => {
    key = await mintKey(stack.gateway, 'pro');
  });

  it('refuses direct requests without the secret, or with a wrong one, with 401', async () => {
    expectErrorBody(await call(`${stack.pets.url}/pets`), 401, 'UNAUTHORIZED');
    expectErrorBody(
      await call(`${stack.pets.url}/pets`, { headers: { 'x-internal-secret': 'guess-guess-guess-guess' } }),
      401,
      'UNAUTHORIZED',
    );
    expectErrorBody(await postJson(`${stack.pets.url}/pets`, { name: 'Sneaky', categoryId: 1 }), 401, 'UNAUTHORIZED');
  });

  it('serves the gateway, which sends the secret', async () => {
    const created = await postJson(
      `${stack.gateway.url}/v1/pets`,
      { name: 'Trusted', categoryId: 1 },
      { authorization: `Bearer ${key}` },
    );
    expect(created.status).toBe(201);
    const listed = await call(`${stack.gateway.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
    expect((listed.body as Array<{ name: string }>).map((pet) => pet.name)).toEqual(['Trusted']);
  });

  it('keeps health open for orchestrators', async () => {
    expect((await call(`${stack.pets.url}/health/ready`)).status).toBe(200);
  });
});
