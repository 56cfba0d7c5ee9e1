import { randomBytes } from 'node:crypto';
import { createGatewayTestDatabase, GatewayTestDatabase, GatewayUnderTest, startGateway } from './gateway';
import { RunningPets, startPetsService } from './pets-service';

/** Two gateway instances behind one imagined balancer, with the pets service they forward to. */
export interface TwoInstances {
  pets: RunningPets;
  database: GatewayTestDatabase;
  a: GatewayUnderTest;
  b: GatewayUnderTest;
  close(): Promise<void>;
}

/**
 * One fleet of two on the engine the run selects: the same consumers database and, with REDIS_URL, the same key
 * prefix (shared counters and change channel), a prefix of the fleet's own (`label` and a random part), so no
 * other test file's gateways share its channel.
 */
export async function startTwoInstances(label: string, env?: Record<string, string>): Promise<TwoInstances> {
  const pets = await startPetsService();
  const database = await createGatewayTestDatabase();
  const keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${label}-${randomBytes(4).toString('hex')}:`;
  const a = await startGateway({ petsUrl: pets.url, database, keyPrefix, env });
  const b = await startGateway({ petsUrl: pets.url, database, keyPrefix, env });
  return {
    pets,
    database,
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await database.drop();
      await pets.close();
    },
  };
}
