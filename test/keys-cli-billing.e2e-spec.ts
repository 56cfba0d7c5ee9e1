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
} from './support/gateway';

const run = promisify(execFile);
const KEYS_CLI = join(__dirname, '../scripts/keys.js');
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
 * The keys CLI's billing verbs (issue #38 point 5), against a real gateway's admin API: `billing NAME` shows the
 * anchor, the monthly quota and the current period as the admin API says them; `--anchor` and `--per-month` change
 * them (`none`: back to the default); mistakes are exit 2 with one line and a hint, the API's refusals exit 1.
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
    ]);
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

  it('has its help: the verb’s own lines (exit 0), and a place in the whole usage', async () => {
    const own = await cli('billing', '--help');
    expect(own.filter((line) => line.startsWith('  npm run -s keys --'))).toEqual([
      '  npm run -s keys -- billing NAME',
      '  npm run -s keys -- billing NAME [--anchor ISO-DATE|none] [--per-month N|none]',
    ]);
    expect((await cli('-h')).join('\n')).toContain('npm run -s keys -- billing NAME [--anchor');
  });
});
