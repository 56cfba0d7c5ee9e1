import { createServer, request as httpRequest, Server } from 'node:http';
import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { ConsoleClient, ConsoleUnderTest, startConsole } from '../../support/console';
import { adminCall } from '../../support/gateway';
import { call } from '../../support/http';
import { PortalStack, PortalUnderTest, startPortal, startPortalStack } from '../../support/portal';
import { PortalVisitor as Visitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Fault = 'none' | 'error-500' | 'html-502' | 'unreachable';

/**
 * The admin API as the web apps reach it, through a switch: a fault on the paths it matches (all when no pattern)
 * answers 500 with the Error body, 502 with an HTML page (a proxy's), or drops the connection.
 */
async function startFaultyAdmin(target: string) {
  const upstream = new URL(target);
  const state: { fault: Fault; only?: RegExp } = { fault: 'none' };
  const server: Server = createServer((incoming, outgoing) => {
    const applies = state.fault !== 'none' && (!state.only || state.only.test(incoming.url ?? ''));
    if (applies && state.fault === 'unreachable') return incoming.socket.destroy();
    if (applies && state.fault === 'error-500') {
      outgoing.writeHead(500, { 'content-type': 'application/json' });
      return outgoing.end(JSON.stringify({ code: 'INTERNAL_ERROR', message: 'Internal server error', status: 500 }));
    }
    if (applies && state.fault === 'html-502') {
      outgoing.writeHead(502, { 'content-type': 'text/html' });
      return outgoing.end('<html><body>502 Bad Gateway</body></html>');
    }
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forward.on('error', () => outgoing.destroy());
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    set(fault: Fault, only?: RegExp) {
      state.fault = fault;
      state.only = only;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * No 500 page from a value the admin API accepted, nor from the admin API's own failure (docs/errors.md, "No 500
 * from a value we accepted"): a balance of 1e9 with one credit spent shows the dashboard and the console's consumer
 * page with "not within any date"; a panel the admin API fails to give shows words in its place; a page the admin
 * API cannot serve at all is a page with 502/503, never a 500; a form's text with control characters is its page
 * again, the field's error beside what was typed.
 */
describe('web pages never fail on what the admin API accepted or on its failure', () => {
  let stack: PortalStack;
  let faulty: Awaited<ReturnType<typeof startFaultyAdmin>>;
  let portal: PortalUnderTest;
  let console_: ConsoleUnderTest;
  let developer: Visitor;
  let operator: ConsoleClient;
  let consumer: string;

  beforeAll(async () => {
    stack = await startPortalStack({ gatewayEnv: { USAGE_FLUSH_MS: '200', BAN_GRACE_MS: '60000' } });
    faulty = await startFaultyAdmin(stack.gateway.adminUrl);
    // A second portal, on the same database and token, that reaches the admin API through the switch.
    portal = await startPortal({
      gateway: { ...stack.gateway, adminUrl: faulty.url },
      token: stack.portal.config.adminToken,
      database: stack.database,
      smtpUrl: stack.smtp.url,
    });
    console_ = await startConsole(faulty.url);
    operator = new ConsoleClient(console_.url);
    expect((await operator.signIn(stack.gateway.adminToken)).status).toBe(303);

    // A developer with a verified account, and a balance of 1e9 of which one credit is spent.
    const email = `large-${Date.now()}@example.com`;
    developer = new Visitor(portal.url);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await portal.app.get(AfterAnswer).drain();
    await stack.portal.app.get(AfterAnswer).drain();
    const mail = await stack.smtp.next(email, /Verify/);
    const token = /\/verify\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1];
    expect((await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(
      303,
    );
    const found = await adminCall(stack.gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`);
    consumer = (found.body as { items: Array<{ name: string }> }).items[0].name;
    const topUp = await adminCall(stack.gateway, 'POST', `/consumers/${consumer}/credits/top-ups`, {
      amount: 1e9,
      reason: 'prepaid for years',
    });
    expect(topUp.status).toBe(201);
    const key = await adminCall(stack.gateway, 'POST', `/consumers/${consumer}/keys`, {});
    const secret = (key.body as { key: string }).key;
    expect(
      (await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${secret}` } })).status,
    ).toBe(200);
    for (let i = 0; i < 100; i += 1) {
      const ledger = await adminCall(stack.gateway, 'GET', `/consumers/${consumer}/credits/ledger?days=30`);
      if ((ledger.body as { exhaustion?: string }).exhaustion === 'not-within-any-date') break;
      await sleep(100);
    }
  }, 180_000);
  afterAll(async () => {
    await console_?.close();
    await portal?.close();
    await faulty?.close();
    await stack?.close();
  });
  afterEach(() => faulty.set('none'));

  it('shows the dashboard of a balance of 1e9 with one credit spent: "not within any date"', async () => {
    const page = await developer.get('/dashboard');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/data-testid="credits-exhaustion">not within any date/);
    expect(page.text).toContain('<span data-testid="credits-balance">999,999,999</span>');
  });

  it('shows the console\'s consumer page of the same balance: "not within any date"', async () => {
    const page = await operator.request('GET', `/consumers/${consumer}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/data-testid="credits-exhaustion">not within any date/);
  });

  it('shows the dashboard and the consumer page when the ledger fails: the balance, and words in its place', async () => {
    for (const fault of ['error-500', 'html-502', 'unreachable'] as const) {
      faulty.set(fault, /\/credits\/ledger/);
      const dashboard = await developer.get('/dashboard');
      expect([fault, dashboard.status]).toEqual([fault, 200]);
      expect(dashboard.text).toContain('data-testid="credits-ledger-unavailable"');
      expect(dashboard.text).toContain('<span data-testid="credits-balance">999,999,999</span>');
      const page = await operator.request('GET', `/consumers/${consumer}`);
      expect([fault, page.status]).toEqual([fault, 200]);
      expect(page.text).toContain('<span data-testid="credits-balance">999,999,999</span>');
    }
  });

  it('answers a page (502, 503), never a 500, when the admin API fails the whole page', async () => {
    for (const [fault, status] of [
      ['error-500', 502],
      ['html-502', 502],
      ['unreachable', 503],
    ] as const) {
      faulty.set(fault);
      const dashboard = await developer.get('/dashboard');
      expect([fault, dashboard.status]).toEqual([fault, status]);
      expect(dashboard.text).toContain('The admin API is unavailable');
      const overview = await operator.request('GET', `/consumers/${consumer}`);
      expect([fault, overview.status]).toEqual([fault, status]);
      expect(overview.text).toContain('The admin API is unavailable');
    }
  });

  it("refuses a console reason with control characters: the form's page again, its error, what was typed", async () => {
    const before = await adminCall(stack.gateway, 'GET', `/consumers/${consumer}/billing`);
    const reply = await operator.submit(`/consumers/${consumer}`, `/consumers/${consumer}/credits/top-up`, {
      amount: '5',
      reason: 'invoice\u000042',
    });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('id="top-up-error" role="alert">Say why in one line of ordinary text');
    expect(reply.text).toMatch(/id="topUpAmount" name="amount"[^>]*value="5"/);
    expect(reply.text).toContain('value="invoice');
    const after = await adminCall(stack.gateway, 'GET', `/consumers/${consumer}/billing`);
    expect((after.body as { credits: unknown }).credits).toEqual((before.body as { credits: unknown }).credits);
  });

  it('refuses a console decline note with control characters: the page again, the error beside the note', async () => {
    const asked = await adminCall(stack.gateway, 'POST', '/plan-requests', {
      consumer,
      requestedPlan: 'pro',
      expectedVolume: '10/day',
    });
    expect(asked.status).toBe(201);
    const id = (asked.body as { id: string }).id;
    const reply = await operator.submit('/plan-requests', `/plan-requests/${id}/decline`, { note: 'no\u0007thanks' });
    expect(reply.status).toBe(400);
    expect(reply.text).toMatch(new RegExp(`id="note-${id}-error" role="alert">Use ordinary text`));
    expect(reply.text).toMatch(new RegExp(`id="note-${id}"[^>]*value="no\u0007thanks"`));
    const still = await adminCall(stack.gateway, 'GET', `/plan-requests?consumer=${consumer}`);
    expect((still.body as { items: Array<{ status: string }> }).items.map((r) => r.status)).toEqual(['pending']);
    expect((await operator.submit('/plan-requests', `/plan-requests/${id}/decline`, { note: 'Not yet.' })).status).toBe(
      303,
    );
  });

  it("refuses a portal plan request with control characters: the form's page again, its error, what was typed", async () => {
    const reply = await developer.submit('/plan', {
      plan: 'pro',
      expectedVolume: '500 a day\u0007',
      message: 'line one\nline two',
    });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain(
      'Use one line of ordinary text: no tabs, line breaks or invisible control characters.',
    );
    expect(reply.text).toContain('line one\nline two</textarea>');
    const requests = await adminCall(stack.gateway, 'GET', `/plan-requests?consumer=${consumer}`);
    expect((requests.body as { items: Array<{ status: string }> }).items.map((r) => r.status)).not.toContain('pending');
  });
});
