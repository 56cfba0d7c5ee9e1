import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { adminCall } from '../../support/gateway';
import { expectErrorBody, received, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

const run = promisify(execFile);
const KEYS_CLI = join(__dirname, '../../../scripts/keys.js');
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

const ANON_LIMIT = 5;
const THRESHOLD = 2;

/** The balancer in front of the gateway: the one peer it believes (TRUST_PROXY), as the rate limits do. */
const BALANCER = '127.0.0.1';
/** Another host on the gateway's network, not a proxy of it: what it writes in X-Forwarded-For is not believed. */
const STRANGER = '127.0.0.2';

/** GET /v1/pets with `key`, sent from the local address `peer`, with an X-Forwarded-For if given. */
function getFrom(url: string, peer: string, key: string, forwardedFor?: string): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/pets?limit=1`, { localAddress: peer, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) replyHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        const reply = { status: res.statusCode!, headers: replyHeaders, text, body };
        received.push({ method: 'GET', url: `${url}/v1/pets?limit=1`, reply });
        resolve(reply);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Where a credential may come from (issue #50, point 5): a consumer restricted to 10.1.0.0/16 and 2001:db8::/32,
 * a key of it restricted further, the client address judged by the rate limits' trusted-proxy rule
 * (TRUST_PROXY=127.0.0.1: the balancer's X-Forwarded-For is believed, a stranger's is not). A refusal is 403
 * ADDRESS_NOT_ALLOWED and counts nothing as the consumer (no window, no ban, no usage history); it counts against
 * the address's anonymous window, as a bad key does, so a stolen key used from elsewhere is throttled, then banned.
 */
describe('allowed addresses of a consumer and of its keys', () => {
  // A small anonymous window and no grace before strikes: the THRESHOLD + 1st strike bans the address.
  const env = {
    TRUST_PROXY: BALANCER,
    ANON_RATE_LIMIT_PER_MINUTE: String(ANON_LIMIT),
    BAN_THRESHOLD: String(THRESHOLD),
    BAN_GRACE_MS: '0',
  };
  const stack = withStack({ pets: {}, gateway: { env } });
  const admin = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);

  /** The requests its minute window holds. */
  async function counted(name: string): Promise<number> {
    const usage = await admin('GET', `/consumers/${name}/usage`);
    expect(usage.status).toBe(200);
    return (usage.body as { windows: Array<{ name: string; used: number }> }).windows.find((w) => w.name === 'minute')!
      .used;
  }

  /** The requests the usage history holds for the consumer today. */
  async function historyTotal(name: string): Promise<number> {
    const { UsageService } = await import('../../../apps/gateway/src/usage/usage.service');
    await stack.gateway.app.get(UsageService).flush();
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const history = await admin('GET', `/consumers/${name}/usage/history?granularity=day&from=${today}&to=${tomorrow}`);
    expect(history.status).toBe(200);
    return (history.body as { buckets: Array<{ requests: number }> }).buckets.reduce((sum, b) => sum + b.requests, 0);
  }

  async function restrictedConsumer(): Promise<{ name: string; key: string; keyId: string }> {
    const name = unique('fenced');
    const created = await admin('POST', '/consumers', { name, plan: 'pro' });
    expect(created.status).toBe(201);
    const changed = await admin('PATCH', `/consumers/${name}`, {
      allowedAddresses: ['10.1.0.0/16', '2001:DB8::/32', '10.1.7.7/16'],
    });
    expect(changed.status).toBe(200);
    // Stored normalized, each once.
    expect((changed.body as { allowedAddresses: string[] }).allowedAddresses).toEqual(['10.1.0.0/16', '2001:db8::/32']);
    const { key } = created.body as { key: { key: string; id: string } };
    return { name, key: key.key, keyId: key.id };
  }

  it('refuses every other address with 403 ADDRESS_NOT_ALLOWED, counted on the address, not the consumer; allows its ranges', async () => {
    const { name, key } = await restrictedConsumer();
    const refused = [
      // The balancer's hop, believed: a client outside the ranges.
      await getFrom(stack.gateway.url, BALANCER, key, '10.2.0.1'),
      await getFrom(stack.gateway.url, BALANCER, key, '2001:db9::1'),
      // A client that wrote an allowed address itself, the balancer appending the real one: the real one counts.
      await getFrom(stack.gateway.url, BALANCER, key, '10.1.2.3, 198.51.100.7'),
      // No proxy at all: the balancer's own address.
      await getFrom(stack.gateway.url, BALANCER, key),
      // A stranger spoofing an allowed address: not believed.
      await getFrom(stack.gateway.url, STRANGER, key, '10.1.2.3'),
    ];
    for (const reply of refused) expectErrorBody(reply, 403, 'ADDRESS_NOT_ALLOWED');
    // Each names the address the gateway judged.
    expect(
      refused.map((reply) => /used from (.+): ask/.exec((reply.body as { message: string }).message)?.[1]),
    ).toEqual(['10.2.0.1', '2001:db9::1', '198.51.100.7', '127.0.0.1', '127.0.0.2']);
    // Counted on the address's anonymous window (its headers), nothing in the consumer's.
    for (const reply of refused) expect(reply.headers.get('x-ratelimit-limit')).toBe(String(ANON_LIMIT));
    expect(await counted(name)).toBe(0);

    const allowed = [
      await getFrom(stack.gateway.url, BALANCER, key, '10.1.2.3'),
      await getFrom(stack.gateway.url, BALANCER, key, '2001:db8:ab::1'),
      await getFrom(stack.gateway.url, BALANCER, key, '::ffff:10.1.9.9'),
    ];
    expect(allowed.map((reply) => reply.status)).toEqual([200, 200, 200]);
    expect(await counted(name)).toBe(3);

    // The usage history holds the three answered requests only: the 403s were nobody's.
    expect(await historyTotal(name)).toBe(3);
  });

  it('a stolen key used from elsewhere is throttled, then banned, on that address alone; its consumer pays nothing', async () => {
    const { name, key } = await restrictedConsumer();
    const thief = '198.51.100.66';
    const replies: Reply[] = [];
    for (let i = 0; i < ANON_LIMIT + THRESHOLD + 2; i += 1)
      replies.push(await getFrom(stack.gateway.url, BALANCER, key, thief));
    // The anonymous window's requests get the 403, its remaining count going down as a guesser's does.
    for (const reply of replies.slice(0, ANON_LIMIT)) expectErrorBody(reply, 403, 'ADDRESS_NOT_ALLOWED');
    expect(replies.slice(0, ANON_LIMIT).map((reply) => reply.headers.get('x-ratelimit-remaining'))).toEqual(
      Array.from({ length: ANON_LIMIT }, (_, i) => String(ANON_LIMIT - 1 - i)),
    );
    // Then 429: THRESHOLD + 1 strikes, the last of which bans the address.
    for (const reply of replies.slice(ANON_LIMIT, ANON_LIMIT + THRESHOLD + 1))
      expectErrorBody(reply, 429, 'RATE_LIMITED');
    expectErrorBody(replies[ANON_LIMIT + THRESHOLD + 1], 429, 'KEY_BANNED');
    // A guessed key from the banned address: banned too (one tracker, the address).
    expectErrorBody(await getFrom(stack.gateway.url, BALANCER, 'petk_guessed', thief), 429, 'KEY_BANNED');

    // The consumer: no window counted, no ban, no usage; its own clients, from its ranges, are served.
    expect(await counted(name)).toBe(0);
    const usage = await admin('GET', `/consumers/${name}/usage`);
    expect(usage.body).toMatchObject({ banned: false });
    expect((usage.body as { windows: Array<{ used: number }> }).windows.every((window) => window.used === 0)).toBe(
      true,
    );
    expect(await historyTotal(name)).toBe(0);
    expect((await getFrom(stack.gateway.url, BALANCER, key, '10.1.2.3')).status).toBe(200);
    expect(await counted(name)).toBe(1);
  });

  it("a key restricted further is refused outside its own ranges, inside its consumer's; null lifts it", async () => {
    const { name, key, keyId } = await restrictedConsumer();
    const narrowed = await admin('PATCH', `/consumers/${name}/keys/${keyId}`, { allowedAddresses: ['10.1.5.0/24'] });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body).toMatchObject({ id: keyId, allowedAddresses: ['10.1.5.0/24'] });
    expect((await getFrom(stack.gateway.url, BALANCER, key, '10.1.5.20')).status).toBe(200);
    expectErrorBody(await getFrom(stack.gateway.url, BALANCER, key, '10.1.6.20'), 403, 'ADDRESS_NOT_ALLOWED');
    // A range of its own outside the consumer's: still within both only.
    expect(
      (await admin('PATCH', `/consumers/${name}/keys/${keyId}`, { allowedAddresses: ['10.9.0.0/16'] })).status,
    ).toBe(200);
    expectErrorBody(await getFrom(stack.gateway.url, BALANCER, key, '10.9.0.1'), 403, 'ADDRESS_NOT_ALLOWED');
    // Lifted on the key and on the consumer: anywhere.
    expect((await admin('PATCH', `/consumers/${name}/keys/${keyId}`, { allowedAddresses: null })).status).toBe(200);
    expect((await getFrom(stack.gateway.url, BALANCER, key, '10.1.6.20')).status).toBe(200);
    expect((await admin('PATCH', `/consumers/${name}`, { allowedAddresses: null })).status).toBe(200);
    expect((await getFrom(stack.gateway.url, STRANGER, key)).status).toBe(200);
    // A rotation's successor keeps its key's ranges.
    await admin('PATCH', `/consumers/${name}/keys/${keyId}`, { allowedAddresses: ['10.1.5.0/24'] });
    const rotated = await admin('POST', `/consumers/${name}/keys/${keyId}/rotate`, {});
    expect(rotated.body).toMatchObject({ key: { allowedAddresses: ['10.1.5.0/24'] } });
    const successor = (rotated.body as { key: { key: string } }).key.key;
    expectErrorBody(await getFrom(stack.gateway.url, STRANGER, successor), 403, 'ADDRESS_NOT_ALLOWED');
  });

  it('audits each change and refuses what is no address or range (400)', async () => {
    const { name, keyId } = await restrictedConsumer();
    for (const bad of [[], ['10.1'], ['10.0.0.0/33'], '10.0.0.0/8', [7]]) {
      expectErrorBody(await admin('PATCH', `/consumers/${name}`, { allowedAddresses: bad }), 400, 'VALIDATION_FAILED');
      expectErrorBody(
        await admin('PATCH', `/consumers/${name}/keys/${keyId}`, { allowedAddresses: bad }),
        400,
        'VALIDATION_FAILED',
      );
    }
    // An IPv4-mapped IPv6 range is stored as the IPv4 range it means (clients on such addresses are judged as IPv4).
    const mapped = await admin('PATCH', `/consumers/${name}/keys/${keyId}`, {
      allowedAddresses: ['::ffff:10.1.5.0/120'],
    });
    expect(mapped.body).toMatchObject({ allowedAddresses: ['10.1.5.0/24'] });
    // The key's update needs the field: a body that forgot it lifts nothing.
    expectErrorBody(await admin('PATCH', `/consumers/${name}/keys/${keyId}`, {}), 400, 'VALIDATION_FAILED');
    const audit = await admin('GET', `/audit?target=${name}`);
    const rows = (audit.body as { items: Array<{ action: string; changes: Record<string, unknown> }> }).items;
    expect(rows.filter((row) => row.action === 'consumer.update').map((row) => row.changes.allowedAddresses)).toEqual([
      { before: null, after: ['10.1.0.0/16', '2001:db8::/32'] },
    ]);
    expect(rows.filter((row) => row.action === 'key.update').map((row) => row.changes.allowedAddresses)).toEqual([
      { before: null, after: ['10.1.5.0/24'] },
    ]);
  });

  it('the CLI sets them: allow NAME RANGE..., --key, --anywhere', async () => {
    const { name, key, keyId } = await restrictedConsumer();
    const cli = async (...args: string[]) =>
      (
        await run(process.execPath, [KEYS_CLI, ...args], {
          env: { ...process.env, ADMIN_URL: stack.gateway.adminUrl, ADMIN_TOKEN: stack.gateway.adminToken },
        })
      ).stdout.trim();
    expect(await cli('allow', name, '10.3.0.0/16')).toBe(
      `"${name}"'s keys and tokens may be used only from 10.3.0.0/16.`,
    );
    expect((await getFrom(stack.gateway.url, BALANCER, key, '10.3.1.1')).status).toBe(200);
    expect(await cli('allow', name, '--key', keyId, '10.3.9.9/24')).toMatch(/may be used only from 10\.3\.9\.0\/24 /);
    expectErrorBody(await getFrom(stack.gateway.url, BALANCER, key, '10.3.1.1'), 403, 'ADDRESS_NOT_ALLOWED');
    await cli('allow', name, '--key', keyId, '--anywhere');
    expect(await cli('allow', name, '--anywhere')).toBe(`"${name}"'s keys and tokens may be used from anywhere.`);
    expect((await getFrom(stack.gateway.url, STRANGER, key)).status).toBe(200);
    await expect(cli('allow', name, '10.1')).rejects.toMatchObject({
      stderr: expect.stringContaining('allowedAddresses must be'),
    });
  });
});
