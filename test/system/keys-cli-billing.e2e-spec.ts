import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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

const run = promisify(execFile);
const KEYS_CLI = join(__dirname, '../../scripts/keys.js');
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

interface Billing {
  consumer: string;
  billingAnchor: string;
  anchorSet: boolean;
  ownPerMonth: number | null;
  perMonth: number | null;
  currentPeriod: { start: string; end: string };
}

/**
 * The keys CLI's billing and credits verbs (issue #38 point 5), against a real gateway's admin API: `billing NAME`
 * shows the anchor, the monthly quota, the current period and the credit terms as the admin API says them;
 * `--anchor`, `--per-month`, `--refill` and `--cost` change them (`none`: back to the default); `credits` shows the
 * balance and ledger, tops up and sets; mistakes are exit 2 with one line and a hint, the API's refusals exit 1.
 */
describe('keys CLI: billing', () => {
  let database: GatewayTestDatabase;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    database = await createGatewayTestDatabase();
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1', database });
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
  });

  const cli = async (...args: string[]) =>
    (
      await run(process.execPath, [KEYS_CLI, ...args], {
        env: { ...process.env, ADMIN_URL: gateway.adminUrl, ADMIN_TOKEN: gateway.adminToken },
      })
    ).stdout
      .trim()
      .split('\n');
  /** The CLI's failure: its exit code and the lines it wrote to stderr. */
  const refused = (...args: string[]) =>
    cli(...args).then(
      () => ({ code: 0, stderr: [] as string[] }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr.trim().split('\n') }),
    );
  const billingOf = async (name: string) =>
    (await adminCall(gateway, 'GET', `/consumers/${name}/billing`)).body as Billing;

  it('shows the anchor, the monthly quota and the current period as the admin API says them', async () => {
    const name = unique('bill');
    await mintKey(gateway, 'pro', name);
    const billing = await billingOf(name);
    expect(await cli('billing', name)).toEqual([
      `consumer\t${name}`,
      `anchor\t${billing.billingAnchor}\t(its creation time)`,
      'per month\tnone',
      `period\t${billing.currentPeriod.start}\t${billing.currentPeriod.end}`,
      'credits\tnot in force (a top-up puts them in force)',
    ]);
  });

  it('shows a consumer named like a verb with "credits show NAME"', async () => {
    await mintKey(gateway, 'pro', 'set');
    expect((await cli('credits', 'show', 'set')).slice(0, 2)).toEqual([
      'consumer\tset',
      'credits\tnot in force (a top-up puts them in force)',
    ]);
    // Without "show", "set" is the verb, and it asks for a consumer.
    expect((await refused('credits', 'set')).stderr[0]).toBe('keys: credits set needs the consumer name');
  });

  it('moves the anchor and sets its own monthly quota, then puts both back with none', async () => {
    const name = unique('bill');
    await mintKey(gateway, 'enterprise', name, { perMinute: 100, perDay: 1000 });
    const changed = await cli('billing', name, '--anchor', '2026-01-31T09:00:00Z', '--per-month', '5000');
    expect(changed[0]).toBe(`Changed the billing of "${name}" (audited); every gateway applies it at once:`);
    const billing = await billingOf(name);
    expect(billing).toMatchObject({
      billingAnchor: '2026-01-31T09:00:00.000Z',
      anchorSet: true,
      ownPerMonth: 5000,
      perMonth: 5000,
    });
    expect(changed.slice(1)).toEqual([
      `consumer\t${name}`,
      'anchor\t2026-01-31T09:00:00.000Z\t(its own)',
      'per month\t5000\t(its own)',
      `period\t${billing.currentPeriod.start}\t${billing.currentPeriod.end}`,
      'credits\tnot in force (a top-up puts them in force)',
    ]);
    // The period is cut by the anchor: its day of month and time of day (or the month's last day).
    expect(billing.currentPeriod.end).toMatch(/T09:00:00\.000Z$/);
    expect(await cli('billing', name)).toEqual(changed.slice(1));
    // One flag changes one field.
    await cli('billing', name, '--per-month', 'none');
    expect(await billingOf(name)).toMatchObject({ anchorSet: true, ownPerMonth: null, perMonth: null });
    await cli('billing', name, '--anchor', 'none');
    expect(await billingOf(name)).toMatchObject({ anchorSet: false, ownPerMonth: null });
    expect((await cli('billing', name))[1]).toMatch(/\t\(its creation time\)$/);
    // Audited, one row per change.
    const audit = await cli('audit', '--target', name, '--action', 'consumer.billing');
    expect(audit).toHaveLength(3);
  });

  it('says a mistake in one line with its hint (exit 2), and the admin API’s refusal with its message (exit 1)', async () => {
    const name = unique('bill');
    await mintKey(gateway, 'free', name);
    expect(await refused('billing', name, '--per-month', '0')).toEqual({
      code: 2,
      stderr: ['keys: --per-month must be a positive integer', 'See: npm run -s keys -- billing --help'],
    });
    expect(await refused('billing')).toEqual({
      code: 2,
      stderr: ['keys: billing needs the consumer name', 'See: npm run -s keys -- billing --help'],
    });
    expect((await refused('billing', name, '--anchour', 'x')).stderr[0]).toMatch(/^keys: Unknown option '--anchour'/);
    expect(await refused('billing', name, '--anchor', 'next tuesday')).toEqual({
      code: 1,
      stderr: ['keys: billingAnchor must be an ISO 8601 date-time'],
    });
    expect(await refused('billing', 'nobody-here')).toEqual({
      code: 1,
      stderr: ['keys: No consumer named "nobody-here".'],
    });
    expect(await billingOf(name)).toMatchObject({ anchorSet: false, ownPerMonth: null });
  });

  // On the embedded test database a credit top-up answers 503 "The consumers database is unreachable" (the admin
  // API's, not the CLI's: reported to branch credits); on PostgreSQL it passes.
  it('tops up, shows and sets credits; sets the refill and the costs through billing; ledger newest first', async () => {
    const name = unique('cred');
    await mintKey(gateway, 'pro', name);
    expect(await cli('billing', name)).toContain('credits\tnot in force (a top-up puts them in force)');
    expect(await cli('credits', 'top-up', name, '--amount', '100', '--reason', 'first order')).toEqual([
      `Topped up "${name}" by 100 (audited): its balance is 100.`,
    ]);
    await cli('credits', 'top-up', name, '--amount', '20', '--reason', 'goodwill');
    await cli('billing', name, '--refill', '50/day', '--cost', 'createPet=5', '--cost', 'listPets=2');
    const billing = (await adminCall(gateway, 'GET', `/consumers/${name}/billing`)).body as Billing & {
      credits: { balance: number; refill: unknown; refillSet: boolean; nextRefillAt: string; costs: object };
    };
    expect(billing.credits).toMatchObject({
      balance: 120,
      refill: { amount: 50, every: 'day' },
      refillSet: true,
      costs: { createPet: 5, listPets: 2, getPet: 1 },
    });
    const shown = await cli('credits', name, '--days', '3');
    expect(shown.slice(0, 4)).toEqual([
      `consumer\t${name}`,
      'balance\t120',
      `refill\t50/day\t(its own)\tnext ${billing.credits.nextRefillAt}`,
      'costs\tcreatePet=5 getPet=1 listPets=2',
    ]);
    // Three UTC days of spend (none spent), then the ledger, newest first.
    const spend = shown.indexOf('day\tspent');
    expect(shown.slice(spend + 1, spend + 4)).toEqual([
      expect.stringMatching(/^\d{4}-\d{2}-\d{2}\t0$/),
      expect.stringMatching(/\t0$/),
      expect.stringMatching(/\t0$/),
    ]);
    const ledger = shown.slice(shown.indexOf('at\tkind\tamount\tbalance after\treason\tactor') + 1);
    expect(ledger.map((line) => line.split('\t').slice(1, 5))).toEqual([
      ['top-up', '20', '120', 'goodwill'],
      ['top-up', '100', '100', 'first order'],
    ]);
    expect(await cli('credits', 'set', name, '--balance', '7', '--reason', 'correction')).toEqual([
      `Set the balance of "${name}" to 7 (audited).`,
    ]);
    await cli('billing', name, '--refill', 'none', '--cost', 'none');
    expect((await cli('credits', name)).slice(1, 4)).toEqual([
      'balance\t7',
      'refill\tnone',
      'costs\tcreatePet=1 getPet=1 listPets=1',
    ]);
    expect((await cli('credits', 'set', name, '--balance', 'none', '--reason', 'ended'))[0]).toContain(
      'Credits are no longer in force',
    );
    expect((await cli('credits', name))[1]).toBe('credits\tnot in force (a top-up puts them in force)');
    expect(await refused('credits', 'top-up', name, '--amount', '0', '--reason', 'x')).toEqual({
      code: 2,
      stderr: ['keys: --amount must be a positive integer', 'See: npm run -s keys -- credits --help'],
    });
    expect((await refused('credits', 'top-up', name, '--amount', '5')).stderr[0]).toBe(
      'keys: credits top-up needs --reason TEXT: the ledger and the audit keep it',
    );
    expect((await refused('billing', name, '--refill', '5/week')).code).toBe(2);
    const unknown = await refused('billing', name, '--cost', 'deletePet=1');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr[0]).toContain('deletePet');
  });

  it('has its help: the verb’s own lines (exit 0), and a place in the whole usage', async () => {
    const own = await cli('billing', '--help');
    expect(own.filter((line) => line.startsWith('  npm run -s keys --'))).toEqual([
      '  npm run -s keys -- billing NAME',
      '  npm run -s keys -- billing NAME [--anchor ISO-DATE|none] [--per-month N|none] [--refill N/day|N/month|none] [--cost OPERATION=N ...|--cost none]',
    ]);
    expect((await cli('credits', '-h')).filter((line) => line.startsWith('  npm run -s keys --'))).toEqual([
      '  npm run -s keys -- credits [show] NAME [--days N]',
      '  npm run -s keys -- credits top-up NAME --amount N --reason TEXT',
      '  npm run -s keys -- credits set NAME --balance N|none --reason TEXT',
    ]);
    const all = (await cli('-h')).join('\n');
    expect(all).toContain('npm run -s keys -- billing NAME [--anchor');
    expect(all).toContain('npm run -s keys -- credits top-up NAME');
  });
});
