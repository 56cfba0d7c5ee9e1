import { startPetsService, RunningPets } from './support/pets-service';
import { startGateway, GatewayUnderTest, mintKey, tempConsumersFile } from './support/gateway';
import { call, postJson } from './support/http';

describe('smoke', () => {
  let pets: RunningPets; let gw: GatewayUnderTest; let key: string;
  beforeAll(async () => { pets = await startPetsService(); const f = tempConsumersFile(); key = mintKey(f, 'free'); gw = await startGateway({ petsUrl: pets.url, consumersFile: f }); });
  afterAll(async () => { await gw?.close(); await pets?.close(); });
  it('works', async () => {
    const auth = { authorization: `Bearer ${key}` };
    for (const r of [
      await postJson(`${gw.url}/v1/pets`, { name: 'Rex', categoryId: 1 }, auth),
      await call(`${gw.url}/v1/pets?limit=5`, { headers: auth }),
      await call(`${gw.url}/v1/pets/1`, { headers: auth }),
      await call(`${gw.url}/v1/pets/abc`, { headers: auth }),
      await call(`${gw.url}/v1/pets`),
      await call(`${gw.url}/pets`),
      await call(`${gw.url}/health/live`),
      await call(`${gw.url}/health/ready`),
    ]) console.log(r.status, JSON.stringify(Object.fromEntries(r.headers)), r.text.slice(0, 300));
    const d = await call(`${gw.url}/docs-json`);
    console.log(d.status, d.text.slice(0, 3000));
  });
});
