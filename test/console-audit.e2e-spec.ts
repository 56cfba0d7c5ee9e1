import { ConsoleClient, ConsoleUnderTest, startConsole } from './support/console';
import { adminCall, GatewayUnderTest, startGateway } from './support/gateway';

interface AuditRow {
  action: string;
  actorName: string;
  onBehalfOf: string | null;
  endUserAddress: string | null;
}

/**
 * The operator behind a console change reaches the audit (issue #36 finding 6, issue #37 point 4): the row's actor is
 * the operator's own token; its address is added only when that token may send it (actsForUsers), and a token
 * without it changes things as before, the row naming no address.
 */
describe('the console names the operator address in the audit when their token may', () => {
  let gateway: GatewayUnderTest;
  let console_: ConsoleUnderTest;
  const unique = (stem: string) => `${stem}-${Math.random().toString(36).slice(2, 8)}`;
  const WRITER = ['consumers:read', 'consumers:write', 'keys:write', 'usage:read'];

  async function createToken(actsForUsers: boolean): Promise<{ token: string; name: string }> {
    const name = unique('op');
    const reply = await adminCall(gateway, 'POST', '/tokens', { name, scopes: WRITER, actsForUsers });
    expect(reply.status).toBe(201);
    return { token: (reply.body as { token: string }).token, name };
  }

  /** Signs in with `token`, moves a new consumer to Pro through the console's form, answers the change's row. */
  async function changePlan(token: string): Promise<AuditRow> {
    const consumer = unique('acme');
    expect((await adminCall(gateway, 'POST', '/consumers', { name: consumer, plan: 'free' })).status).toBe(201);
    const client = new ConsoleClient(console_.url);
    expect((await client.signIn(token)).status).toBe(303);
    const saved = await client.submit(`/consumers/${consumer}`, `/consumers/${consumer}/plan`, {
      plan: 'pro',
      perMinute: '',
      perDay: '',
    });
    expect([saved.status, saved.location]).toEqual([303, `/consumers/${consumer}`]);
    const audit = await adminCall(gateway, 'GET', `/audit?target=${consumer}&action=consumer.update`);
    const rows = (audit.body as { items: AuditRow[] }).items;
    expect(rows).toHaveLength(1);
    return rows[0];
  }

  beforeAll(async () => {
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1' });
    console_ = await startConsole(gateway.adminUrl);
  });
  afterAll(async () => {
    await console_?.close();
    await gateway?.close();
  });

  it('with actsForUsers: the row names the operator token and the address the console saw', async () => {
    const operator = await createToken(true);
    const row = await changePlan(operator.token);
    expect(row.actorName).toBe(operator.name);
    expect(row.endUserAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(row.onBehalfOf).toBeNull();
  });

  it('without it: the change is made as before and the row names no address', async () => {
    const operator = await createToken(false);
    const row = await changePlan(operator.token);
    expect([row.actorName, row.endUserAddress, row.onBehalfOf]).toEqual([operator.name, null, null]);
  });
});
