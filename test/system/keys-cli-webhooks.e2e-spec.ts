import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../support/gateway';
import { ThresholdEventsRepository } from '../../apps/gateway/src/alerts/threshold-events.repository';
import { WebhookReceiver } from '../support/webhook-receiver';

const run = promisify(execFile);
const KEYS_CLI = join(__dirname, '../../scripts/keys.js');
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The keys CLI's webhooks verbs (issue #49 point 5), against a real gateway's admin API and a receiver that
 * verifies signatures: add (the secret printed once, as the last line), list, deliveries with their attempts,
 * redeliver (the same webhook-id), failing, remove; for a consumer and for the fleet (--fleet); mistakes exit 2
 * with one line and a hint, the API's refusals exit 1 with its message.
 */
describe('keys CLI: webhooks', () => {
  let database: GatewayTestDatabase;
  let gateway: GatewayUnderTest;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    database = await createGatewayTestDatabase();
    gateway = await startGateway({
      petsUrl: 'http://127.0.0.1:1',
      database,
      env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_POLL_MS: '50' },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await receiver.close();
  });

  const cli = async (...args: string[]) =>
    (
      await run(process.execPath, [KEYS_CLI, ...args], {
        env: { ...process.env, ADMIN_URL: gateway.adminUrl, ADMIN_TOKEN: gateway.adminToken },
      })
    ).stdout
      .trim()
      .split('\n');
  const refused = (...args: string[]) =>
    cli(...args).then(
      () => ({ code: 0, stderr: [] as string[] }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr.trim().split('\n') }),
    );

  it('adds an endpoint (its secret printed once), lists it, shows a delivery with its attempts, redelivers it and removes it', async () => {
    const name = unique('hook');
    await mintKey(gateway, 'free', name);
    const added = await cli('webhooks', 'add', name, '--url', receiver.url('/cli'), '--events', 'credits.exhausted');
    expect(added[0]).toMatch(
      new RegExp(
        `^Added \\(audited\\): [0-9a-f-]{36}\\t${name}\\t${receiver.url('/cli')}\\tenabled\\tcredits.exhausted$`,
      ),
    );
    expect(added[1]).toBe('Its signing secret, shown only now:');
    const secret = added[2];
    expect(secret).toMatch(/^whsec_/);
    receiver.expect('/cli', secret);
    const id = added[0].split('\t')[0].slice('Added (audited): '.length);
    const listed = await cli('webhooks', 'list', name);
    expect(listed).toEqual([`${id}\t${name}\t${receiver.url('/cli')}\tenabled\tcredits.exhausted`]);
    expect(listed.join('\n')).not.toContain(secret.slice(6));
    // A test event through the admin API; the CLI shows its delivery and attempt.
    const test = (await adminCall(gateway, 'POST', `/consumers/${name}/webhook-endpoints/${id}/test`)).body as {
      id: string;
      webhookId: string;
    };
    const deadline = Date.now() + 20_000;
    while (receiver.at('/cli').length === 0 && Date.now() < deadline) await sleep(50);
    let deliveries = await cli('webhooks', 'deliveries', name, id);
    for (let i = 0; i < 40 && !deliveries[0].includes('\tdelivered\t'); i += 1) {
      await sleep(50);
      deliveries = await cli('webhooks', 'deliveries', name, id);
    }
    expect(deliveries[0]).toMatch(
      new RegExp(`^${test.id}\\t${test.webhookId}\\twebhook.test\\tdelivered\\tattempts 1\\t`),
    );
    expect(deliveries[1]).toMatch(/^ {2}#1\t\S+\t204\t\d+ ms$/);
    // A delivery named under another endpoint is the admin API's 404: nothing is sent again.
    expect(await refused('webhooks', 'redeliver', name, randomUUID(), test.id)).toEqual({
      code: 1,
      stderr: [expect.stringMatching(/^keys: Consumer "hook-[0-9a-f]+" has no webhook endpoint [0-9a-f-]{36}\.$/)],
    });
    const again = await cli('webhooks', 'redeliver', name, id, test.id);
    expect(again[0]).toMatch(
      new RegExp(
        `^Redelivering \\(audited\\), the same webhook-id: [0-9a-f-]{36}\\t${test.webhookId}\\twebhook.test\\tpending\\t`,
      ),
    );
    while (receiver.requestIds().filter((w) => w === test.webhookId).length < 2 && Date.now() < deadline)
      await sleep(50);
    expect(receiver.requestIds().filter((w) => w === test.webhookId)).toHaveLength(2);
    expect(receiver.at('/cli')).toHaveLength(1);
    expect(receiver.refused).toEqual([]);
    expect(await cli('webhooks', 'failing')).toEqual(['No webhook endpoint is failing or disabled.']);
    // A rotation: the new secret printed once, the old one still signing (the receiver, still on it, accepts).
    const rotated = await cli('webhooks', 'rotate', name, id);
    expect(rotated[0]).toMatch(/^Rotated \(audited\): the old secret also signs every delivery until \S+Z\.$/);
    expect(rotated[1]).toBe('The new signing secret, shown only now:');
    expect(rotated[2]).toMatch(/^whsec_/);
    expect(rotated[2]).not.toBe(secret);
    const before = receiver.requestIds().length;
    await adminCall(gateway, 'POST', `/consumers/${name}/webhook-endpoints/${id}/test`);
    while (receiver.requestIds().length === before && Date.now() < deadline + 20_000) await sleep(50);
    expect(receiver.requestIds().length).toBe(before + 1);
    expect(receiver.refused).toEqual([]);
    expect((await cli('webhooks', 'rotate', name, id, '--overlap', '0')).slice(0, 2)).toEqual([
      'Rotated (audited): the old secret no longer signs.',
      'The new signing secret, shown only now:',
    ]);
    expect(await cli('webhooks', 'remove', name, id)).toEqual([
      `Removed webhook endpoint ${id} and its deliveries (audited).`,
    ]);
    expect(await cli('webhooks', 'list', name)).toEqual(['No webhook endpoints.']);
  });

  it('manages the fleet-wide endpoints with --fleet', async () => {
    const added = await cli('webhooks', 'add', '--fleet', '--url', receiver.url('/fleet'), '--description', 'ops');
    const id = added[0].split('\t')[0].slice('Added (audited): '.length);
    expect(await cli('webhooks', 'list', '--fleet')).toEqual([
      `${id}\t(fleet)\t${receiver.url('/fleet')}\tenabled\tall events\tops`,
    ]);
    expect(await cli('webhooks', 'deliveries', '--fleet', id)).toEqual(['No deliveries yet.']);
    const none = randomUUID();
    expect(await refused('webhooks', 'redeliver', '--fleet', id, none)).toEqual({
      code: 1,
      stderr: [`keys: Fleet-wide webhook endpoint ${id} has no delivery ${none}.`],
    });
    expect(await cli('webhooks', 'remove', '--fleet', id)).toEqual([
      `Removed webhook endpoint ${id} and its deliveries (audited).`,
    ]);
  });

  it("lists a consumer's threshold events, newest first, filtered by policy", async () => {
    const name = unique('ev');
    await mintKey(gateway, 'free', name);
    expect(await cli('events', name)).toEqual(['No threshold events.']);
    const repository = gateway.app.get(ThresholdEventsRepository);
    const at = Date.parse('2026-11-28T14:03:11.482Z');
    const write = async (policy: 'day' | 'month', threshold: number, offset: number) => {
      const event = await repository.record(
        {
          consumer: name,
          policy,
          threshold,
          periodStartMs: Date.parse('2026-11-28T00:00:00.000Z'),
          periodEndMs: Date.parse('2026-11-29T00:00:00.000Z'),
          limit: 1000,
          used: threshold * 10,
          balance: null,
          crossedAtMs: at + offset,
          source: 'request',
        },
        at + offset,
      );
      if (typeof event === 'string') throw new Error(event);
      return event.id;
    };
    const day = await write('day', 80, 0);
    const month = await write('month', 100, 1000);
    expect(await cli('events', name)).toEqual([
      `2026-11-28T14:03:12.482Z\tquota.threshold_crossed\tmonth 100 %\tused 1000 of 1000\t2026-11-28T00:00:00.000Z – 2026-11-29T00:00:00.000Z\t${month}`,
      `2026-11-28T14:03:11.482Z\tquota.threshold_crossed\tday 80 %\tused 800 of 1000\t2026-11-28T00:00:00.000Z – 2026-11-29T00:00:00.000Z\t${day}`,
    ]);
    expect((await cli('events', name, '--policy', 'day', '--limit', '5')).map((l) => l.split('\t').pop())).toEqual([
      day,
    ]);
    expect(await refused('events')).toEqual({
      code: 2,
      stderr: ['keys: events needs the consumer name', 'See: npm run -s keys -- events --help'],
    });
    expect(await refused('events', name, '--policy', 'week')).toEqual({
      code: 1,
      stderr: ['keys: policy must be one of day, month, credits'],
    });
  });

  it('says a mistake in one line with its hint (exit 2), and the admin API’s refusal with its message (exit 1)', async () => {
    expect(await refused('webhooks', 'add', 'someone')).toEqual({
      code: 2,
      stderr: ['keys: webhooks add needs --url URL', 'See: npm run -s keys -- webhooks --help'],
    });
    expect(await refused('webhooks', 'list')).toEqual({
      code: 2,
      stderr: ['keys: webhooks list needs the consumer name (or --fleet)', 'See: npm run -s keys -- webhooks --help'],
    });
    expect((await refused('webhooks', 'frobnicate')).code).toBe(2);
    expect(await refused('webhooks', 'rotate', 'someone', randomUUID(), '--overlap=-1')).toEqual({
      code: 2,
      stderr: ['keys: --overlap must be an integer from 0', 'See: npm run -s keys -- webhooks --help'],
    });
    const name = unique('hook');
    await mintKey(gateway, 'free', name);
    expect(await refused('webhooks', 'add', name, '--url', 'http://10.0.0.1/')).toEqual({
      code: 1,
      stderr: ['keys: url is not a target webhooks may be sent to (private): 10.0.0.1: private address, refused'],
    });
    expect(await refused('webhooks', 'list', 'nobody-here')).toEqual({
      code: 1,
      stderr: ['keys: No consumer named "nobody-here".'],
    });
    const help = await cli('webhooks', '--help');
    expect(help[0]).toBe('Usage:');
    expect(help).toContain('  npm run -s keys -- webhooks redeliver NAME|--fleet ENDPOINT-ID DELIVERY-ID');
    expect(await refused('webhooks', 'redeliver', name, randomUUID())).toEqual({
      code: 2,
      stderr: [
        'keys: webhooks redeliver needs the delivery id (webhooks deliveries lists them)',
        'See: npm run -s keys -- webhooks --help',
      ],
    });
  });
});
