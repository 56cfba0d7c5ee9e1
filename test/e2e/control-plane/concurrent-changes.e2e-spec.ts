import { adminCall, mintKey } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

const withKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

interface KeyView {
  id: string;
  state: 'active' | 'expired' | 'revoked';
}

/** One admin change sent in a race, and what it answered. */
type Observed = { op: 'issue'; reply: Reply } | { op: 'rotate'; reply: Reply } | { op: 'revokeAll'; reply: Reply };

/**
 * Whether the answers and the final keys are those of SOME serial order of the changes (what a per-consumer lock
 * guarantees): issue adds an active key; rotating the first key succeeds only while it is neither revoked nor
 * already rotated, and adds its one successor; revoke-all revokes exactly the keys not yet revoked and lists them.
 */
function explainedBySerialOrder(firstKey: string, observed: Observed[], finalKeys: KeyView[]): boolean {
  const finalActive = new Set(finalKeys.filter((k) => k.state !== 'revoked').map((k) => k.id));
  const search = (remaining: Observed[], live: Set<string>, firstRevoked: boolean, firstRotated: boolean): boolean => {
    if (remaining.length === 0) return live.size === finalActive.size && [...live].every((id) => finalActive.has(id));
    return remaining.some((candidate, index) => {
      const rest = remaining.filter((_, i) => i !== index);
      const { reply } = candidate;
      switch (candidate.op) {
        case 'issue':
          return (
            reply.status === 201 &&
            search(rest, new Set([...live, (reply.body as { id: string }).id]), firstRevoked, firstRotated)
          );
        case 'rotate':
          if (firstRevoked || firstRotated)
            return reply.status === 409 && search(rest, live, firstRevoked, firstRotated);
          return (
            reply.status === 201 &&
            search(rest, new Set([...live, (reply.body as { key: { id: string } }).key.id]), firstRevoked, true)
          );
        case 'revokeAll': {
          const listed = (reply.body as KeyView[]).map((k) => k.id);
          const same = reply.status === 200 && listed.length === live.size && listed.every((id) => live.has(id));
          return same && search(rest, new Set(), firstRevoked || live.has(firstKey), firstRotated);
        }
      }
    });
  };
  return search(observed, new Set([firstKey]), false, false);
}

/**
 * Issue #21: key changes of one consumer are serialised (a lock on the consumer row, in the change's own
 * transaction), on the engine the run selects, across two instances sharing the consumers database.
 */
describe('control plane: concurrent changes of one consumer', () => {
  const stack = withStack({ pets: {}, database: true, sharedKeyPrefix: 'race', gateways: { a: {}, b: {} } });

  const keysOf = async (name: string): Promise<KeyView[]> =>
    ((await adminCall(stack.a, 'GET', `/consumers/${name}`)).body as { keys: KeyView[] }).keys;

  it('20 concurrent rotations of one key leave exactly one successor; the others are refused with 409 KEY_ALREADY_ROTATED', async () => {
    const old = await mintKey(stack.a, 'pro', 'rotate-race');
    const [{ id: keyId }] = await keysOf('rotate-race');
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        adminCall(i % 2 ? stack.a : stack.b, 'POST', `/consumers/rotate-race/keys/${keyId}/rotate`, {
          overlapSeconds: 600,
        }),
      ),
    );
    const won = replies.filter((r) => r.status === 201);
    expect(won.length).toBe(1);
    for (const lost of replies.filter((r) => r.status !== 201)) {
      expectErrorBody(lost, 409, 'KEY_ALREADY_ROTATED');
    }
    const keys = await keysOf('rotate-race');
    expect(keys).toHaveLength(2);
    const successor = (won[0].body as { key: { id: string; key: string } }).key;
    expect(keys.map((k) => k.id).sort()).toEqual([keyId, successor.id].sort());
    // The one new key works, and the old one during its overlap.
    for (const key of [successor.key, old])
      expect((await call(`${stack.b.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
    // Rotating the old key again later is refused the same way: its successor is the key to rotate.
    const again = await adminCall(stack.a, 'POST', `/consumers/rotate-race/keys/${keyId}/rotate`, {});
    expectErrorBody(again, 409, 'KEY_ALREADY_ROTATED');
    expect((again.body as { message: string }).message).toContain(successor.id);
  });

  it('revoke-all racing rotations and issues: every outcome is that of a serial order (30 trials)', async () => {
    const unexplained: string[] = [];
    for (let trial = 0; trial < 30; trial += 1) {
      const name = `revoke-race-${trial}`;
      await mintKey(trial % 2 ? stack.a : stack.b, 'pro', name);
      const [{ id: firstKey }] = await keysOf(name);
      const ops: Array<Observed['op']> = ['rotate', 'issue', 'revokeAll', 'rotate', 'issue', 'rotate', 'issue'];
      const observed = await Promise.all(
        ops.map(async (op, i): Promise<Observed> => {
          const gateway = (i + trial) % 2 ? stack.a : stack.b;
          const reply =
            op === 'issue'
              ? await adminCall(gateway, 'POST', `/consumers/${name}/keys`, {})
              : op === 'rotate'
                ? await adminCall(gateway, 'POST', `/consumers/${name}/keys/${firstKey}/rotate`, {
                    overlapSeconds: 600,
                  })
                : await adminCall(gateway, 'POST', `/consumers/${name}/revoke`);
          return { op, reply } as Observed;
        }),
      );
      for (const { reply } of observed) expect(reply.status).toBeLessThan(500);
      const finalKeys = await keysOf(name);
      if (!explainedBySerialOrder(firstKey, observed, finalKeys)) {
        unexplained.push(
          `${name}: ${observed.map((o) => `${o.op} ${o.reply.status}`).join(', ')}; final ${finalKeys.map((k) => k.state).join(', ')}`,
        );
      }
      // What revoke-all answered is revoked for good: none of its keys is still accepted.
      const revokeAll = observed.find((o) => o.op === 'revokeAll')!.reply.body as KeyView[];
      const revokedIds = new Set(finalKeys.filter((k) => k.state === 'revoked').map((k) => k.id));
      for (const key of revokeAll) expect(revokedIds.has(key.id)).toBe(true);
    }
    expect(unexplained).toEqual([]);
  }, 120_000);
});
