import { PetsClient } from '@petstore/animals-client';
import { DataSource } from 'typeorm';
import { mintKey } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

// The gateway's "minute" window, shortened so that the client's wait is short, yet long enough that even a loaded
// machine sends the Free plan's 60 requests inside one window (a walk of ~90 requests then must cross a 429).
const MINUTE_MS = 15_000;

/** `for await (const pet of client.pets())` against the real gateway: every animal, across a rate limit. */
describe('animals client: walking every animal through the gateway', () => {
  const stack = withStack({
    pets: {},
    gateway: {
      adjust: (config) => {
        config.rateLimit.windowMs.minute = MINUTE_MS;
      },
    },
  });

  let freeKey: string;
  let db: DataSource;

  beforeAll(async () => {
    db = stack.pets.app.get(DataSource);
    await db.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || i, 1, (ARRAY['available','pending','sold'])[1 + i % 3]::pet_status FROM generate_series(1, 240) AS i`,
    );
    freeKey = await mintKey(stack.gateway, 'free', 'client-walker');
  });

  it("reads every animal of a status once, in id order, past the Free plan's 60 a minute, while adding some", async () => {
    const sleeps: number[] = [];
    const client = new PetsClient({
      baseUrl: `${stack.gateway.url}/v1`,
      apiKey: freeKey,
      sleep: (ms) => {
        sleeps.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    const seen: number[] = [];
    let added = 0;
    for await (const pet of client.pets({ status: 'available', limit: 1 })) {
      expect(pet.status).toBe('available');
      seen.push(pet.id);
      if (seen.length % 10 === 0 && added < 5) {
        await client.createPet({ name: `Added ${(added += 1)}`, categoryId: 1, status: 'available' });
      }
    }
    const rows: Array<{ id: string }> = await db.query(`SELECT id FROM pets WHERE status = 'available' ORDER BY id`);
    expect(added).toBe(5);
    expect(seen).toEqual(rows.map((row) => Number(row.id)));
    expect(seen.length).toBeGreaterThan(60);
    // It crossed the window: it waited as told (never banned, or the walk would have failed), within the window and
    // the current second Retry-After counts from.
    expect(sleeps.length).toBeGreaterThanOrEqual(1);
    for (const ms of sleeps) expect(ms).toBeLessThanOrEqual(MINUTE_MS + 1000);
  });
});
