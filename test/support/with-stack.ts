import { randomBytes } from 'node:crypto';
import { PetsConfig } from '../../apps/pets/src/config/pets.config';
import { createGatewayTestDatabase, GatewayTestDatabase, GatewayUnderTest, startGateway } from './gateway';
import { RunningPets, startPetsService } from './pets-service';

/** startGateway's options, less what the stack gives every gateway: the pets URL, the database, the key prefix. */
export type StackGatewayOptions = Omit<Parameters<typeof startGateway>[0], 'petsUrl' | 'database' | 'keyPrefix'>;

export interface StackOptions<Name extends string> {
  /** Starts the pets service, with these overrides of its config (`{}`: its defaults). */
  pets?: Partial<PetsConfig>;
  /** Or the address the gateways forward to, where the stack runs no pets service. */
  petsUrl?: string;
  /** One consumers database for every gateway of the stack, as `database` (without it, each has its own). */
  database?: boolean;
  /**
   * One Redis key prefix for every gateway of the stack (shared counters and change channel), as `keyPrefix`: this
   * label and a random part, so that no other file's gateways share it. Without it, each gateway has its own.
   */
  sharedKeyPrefix?: string;
  /** The gateway, as `gateway`. */
  gateway?: StackGatewayOptions;
  /** Gateways by name, started in this order, each as `<name>` (e.g. `a` and `b`, two instances of one fleet). */
  gateways?: Record<Name, StackGatewayOptions>;
  /** The hooks' timeout, for a stack slow to start on a loaded runner (Jest's testTimeout unless given). */
  timeoutMs?: number;
}

/** The parts, readable from the describe's beforeAll hooks (declared after withStack) and its tests on. */
export type Stack<Name extends string = never> = {
  readonly pets: RunningPets;
  readonly database: GatewayTestDatabase;
  readonly keyPrefix: string;
  readonly gateway: GatewayUnderTest;
} & { readonly [N in Name]: GatewayUnderTest };

const OWN_FIELDS = ['pets', 'database', 'keyPrefix'];

/**
 * The pets service, a consumers database and gateways for the tests of one describe block, the way most e2e
 * files need them: one place for the order they start in (pets, database, gateways in the order given) and close
 * in (the reverse, after the describe's last test). Call it in the describe's body; it registers the beforeAll and
 * afterAll itself. A part that failed to start leaves the ones started before it closed all the same, and a part a
 * test closed itself (an outage it shows) is not closed twice.
 *
 * Jest runs afterAll hooks in the order they are declared: a part of the test's own that must close while the
 * stack still runs (a SQL client of its database) closes in an afterAll declared before withStack.
 */
export function withStack<Name extends string = never>(options: StackOptions<Name>): Stack<Name> {
  const gateways: Array<[string, StackGatewayOptions]> = Object.entries<StackGatewayOptions>(options.gateways ?? {});
  for (const [name] of gateways)
    if ([...OWN_FIELDS, 'gateway'].includes(name)) throw new Error(`withStack: "${name}" names a field of the stack`);
  if (options.gateway) gateways.unshift(['gateway', options.gateway]);
  if (options.pets && options.petsUrl) throw new Error('withStack: pets (a service of its own) or petsUrl, not both');
  if (gateways.length > 0 && !options.pets && !options.petsUrl)
    throw new Error('withStack: the gateways need pets (a service of their own) or a petsUrl');

  /** The fields these options ask for; `parts` holds those started (and the key prefix, known from the start). */
  const asked = new Set(gateways.map(([name]) => name));
  const parts = new Map<string, unknown>();
  if (options.pets) asked.add('pets');
  if (options.database) asked.add('database');
  if (options.sharedKeyPrefix !== undefined) {
    asked.add('keyPrefix');
    const label = `${options.sharedKeyPrefix}-${randomBytes(4).toString('hex')}`;
    parts.set('keyPrefix', `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${label}:`);
  }
  /** How each started part closes, in the order they started. */
  const closers: Array<() => Promise<void>> = [];
  const keep = <Part>(field: string, part: Part, close: () => Promise<void>): void => {
    closers.push(close);
    parts.set(field, part);
  };

  beforeAll(async () => {
    let petsUrl = options.petsUrl!;
    if (options.pets) {
      const pets = await startPetsService(options.pets);
      pets.close = once(pets.close);
      keep('pets', pets, pets.close);
      petsUrl = pets.url;
    }
    let database: GatewayTestDatabase | undefined;
    if (options.database) {
      database = await createGatewayTestDatabase();
      database.drop = once(database.drop);
      keep('database', database, database.drop);
    }
    const keyPrefix = parts.get('keyPrefix') as string | undefined;
    for (const [name, gatewayOptions] of gateways) {
      const gateway = await startGateway({ ...gatewayOptions, petsUrl, database, keyPrefix });
      gateway.close = once(gateway.close);
      keep(name, gateway, gateway.close);
    }
  }, options.timeoutMs);

  afterAll(async () => {
    const failures: unknown[] = [];
    for (const close of closers.splice(0).reverse()) await close().catch((error: unknown) => failures.push(error));
    parts.clear();
    if (failures.length > 0) throw failures[0];
  }, options.timeoutMs);

  const stack = {};
  for (const field of new Set([...OWN_FIELDS, 'gateway', ...asked]))
    Object.defineProperty(stack, field, {
      enumerable: true,
      get: () => {
        if (parts.has(field)) return parts.get(field);
        throw new Error(
          asked.has(field)
            ? `withStack: ${field} read before the stack started or after it closed`
            : `withStack: this stack has no ${field} (its options ask for none)`,
        );
      },
    });
  return stack as Stack<Name>;
}

/** `close`, run once whoever calls it first: the afterAll after a test that stopped the part itself. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closed: Promise<void> | undefined;
  return () => (closed ??= close());
}
