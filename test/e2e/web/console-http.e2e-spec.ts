import { Client } from 'pg';
import { ConsoleClient, ConsoleUnderTest, startConsole } from '../../support/console';
import { until } from '../../../scripts/wait';
import { UsageService } from '../../../apps/gateway/src/usage/usage.service';
import { adminCall } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

/**
 * The operator console over HTTP (issue #26): sign-in with the operator's own token (GET /token), sessions that end
 * when the token is revoked, CSRF on every form, no write action for a read-only token. The browser suite
 * (test/browser/console.browser-spec.ts) walks the same pages in Chromium.
 */
describe('operator console (HTTP)', () => {
  let console_: ConsoleUnderTest;
  // Before withStack: afterAll hooks run in declaration order, and the console closes before the gateway.
  afterAll(async () => {
    await console_?.close();
  });
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', gateway: {} });

  const unique = (stem: string) => `${stem}-${Math.random().toString(36).slice(2, 8)}`;

  async function createToken(
    scopes: string[],
    name = unique('op'),
    restriction: { ownConsumersOnly?: boolean; plans?: string[] } = {},
  ): Promise<{ token: string; id: string; name: string }> {
    const reply = await adminCall(stack.gateway, 'POST', '/tokens', { name, scopes, ...restriction });
    expect(reply.status).toBe(201);
    const body = reply.body as { token: string; record: { id: string } };
    return { token: body.token, id: body.record.id, name };
  }

  beforeAll(async () => {
    console_ = await startConsole(stack.gateway.adminUrl);
    expect((await adminCall(stack.gateway, 'POST', '/consumers', { name: 'acme-http', plan: 'free' })).status).toBe(
      201,
    );
  });

  it('sends a visitor without a session to the sign-in page', async () => {
    const client = new ConsoleClient(console_.url);
    for (const path of ['/', '/consumers', '/consumers/acme-http', '/tokens', '/audit']) {
      const reply = await client.request('GET', path);
      expect([reply.status, reply.location]).toEqual([303, '/sign-in']);
    }
    const page = await client.request('GET', '/sign-in');
    expect(page.text).toMatch(/<label for="field-token">Admin token<\/label>/);
    expect(page.text).toContain('>Sign in</button>');
  });

  it('refuses a wrong or revoked token at sign-in with a clear message and no session', async () => {
    const client = new ConsoleClient(console_.url);
    const wrong = await client.signIn('adm_wrong-token');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('This token was not accepted: it is wrong, revoked or expired.');
    const revoked = await createToken(['consumers:read']);
    expect((await adminCall(stack.gateway, 'POST', `/tokens/${revoked.id}/revoke`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // revocation reaches every instance within a second
    expect((await client.signIn(revoked.token)).status).toBe(401);
    expect((await client.request('GET', '/')).location).toBe('/sign-in');
  });

  it('signs in with a valid token, never puts the token in a page or cookie, and ends the session when the token is revoked', async () => {
    const operator = await createToken(['consumers:read', 'usage:read']);
    const client = new ConsoleClient(console_.url);
    const signedIn = await client.signIn(operator.token);
    expect([signedIn.status, signedIn.location]).toEqual([303, '/']);
    const overview = await client.request('GET', '/');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain(`Signed in as <strong>${operator.name}</strong>`);
    expect(overview.text).not.toContain(operator.token);
    expect((await client.request('GET', '/consumers/acme-http')).text).not.toContain(operator.token);
    // The session row holds the token sealed (AES-256-GCM): the sessions table alone never reveals it.
    const sql = new Client({ connectionString: console_.database.url });
    await sql.connect();
    try {
      const { rows } = await sql.query<{ sess: string }>('SELECT sess::text AS sess FROM "console"."session"');
      const mine = rows.filter((row) => row.sess.includes(`"name":"${operator.name}"`));
      expect(mine).toHaveLength(1);
      expect(mine[0].sess).toContain('"sealedToken"');
      expect(rows.map((row) => row.sess).join('\n')).not.toContain(operator.token);
    } finally {
      await sql.end();
    }
    expect((await adminCall(stack.gateway, 'POST', `/tokens/${operator.id}/revoke`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const ended = await client.request('GET', '/consumers');
    expect([ended.status, ended.location]).toEqual([303, '/sign-in?ended=1']);
    expect((await client.request('GET', '/sign-in?ended=1')).text).toContain('Your session ended');
    expect((await client.request('GET', '/')).location).toBe('/sign-in');
  });

  it('refuses a form without its CSRF token (403, nothing changed)', async () => {
    const writer = await createToken(['consumers:read', 'consumers:write', 'keys:write', 'usage:read']);
    const client = new ConsoleClient(console_.url);
    await client.signIn(writer.token);
    const refused = await client.request('POST', '/consumers/acme-http/plan', {
      plan: 'pro',
      perMinute: '',
      perDay: '',
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Form expired');
    expect(((await adminCall(stack.gateway, 'GET', '/consumers/acme-http')).body as { plan: string }).plan).toBe(
      'free',
    );
    const refusedSignOut = await client.request('POST', '/sign-out', { _csrf: 'forged' });
    expect(refusedSignOut.status).toBe(403);
    const saved = await client.submit('/consumers/acme-http', '/consumers/acme-http/plan', {
      plan: 'pro',
      perMinute: '',
      perDay: '',
    });
    expect([saved.status, saved.location]).toEqual([303, '/consumers/acme-http']);
    expect(((await adminCall(stack.gateway, 'GET', '/consumers/acme-http')).body as { plan: string }).plan).toBe('pro');
    const signedOut = await client.submit('/', '/sign-out');
    expect(signedOut.location).toBe('/sign-in?out=1');
    expect((await client.request('GET', signedOut.location!)).text).toContain('You are signed out.');
    expect((await client.request('GET', '/')).location).toBe('/sign-in');
  });

  it('shows a read-only token no form that posts, on any page, except sign-out', async () => {
    const reader = await createToken(['consumers:read', 'usage:read', 'audit:read', 'plan-requests:read']);
    const client = new ConsoleClient(console_.url);
    await client.signIn(reader.token);
    for (const path of ['/', '/consumers', '/consumers?q=acme', '/consumers/acme-http', '/plan-requests', '/audit']) {
      const page = await client.request('GET', path);
      expect(`${path} ${page.status}`).toBe(`${path} 200`);
      const actions = [...page.text.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]);
      expect(`${path}: ${actions.join(', ')}`).toBe(`${path}: /sign-out`);
      expect(page.text).not.toMatch(/>(Save|Rotate|Revoke|Issue key|Disable|Enable|Unban|Approve|Decline)</);
    }
  });

  /** The auth.* rows the audit holds for a token (its refusals). */
  const authRefusalsOf = async (actor: string) =>
    (
      (await adminCall(stack.gateway, 'GET', `/audit?actor=${actor}&limit=100`)).body as {
        items: Array<{ action: string }>;
      }
    ).items.filter((row) => row.action.startsWith('auth.')).length;

  it("asks the admin API only for the panels a narrow token's scopes can read: its page views write no refusal to the audit", async () => {
    const narrow = await createToken(['consumers:read']);
    const refusalsOf = () => authRefusalsOf(narrow.name);
    const client = new ConsoleClient(console_.url);
    await client.signIn(narrow.token);
    for (const path of ['/', '/consumers/acme-http']) {
      const page = await client.request('GET', path);
      expect(`${path} ${page.status}`).toBe(`${path} 200`);
    }
    // The panels it may not read are left out, headings included.
    expect((await client.request('GET', '/consumers/acme-http')).text).not.toMatch(
      /<h2[^>]*>(Audit trail|Current windows)/,
    );
    // A refusal the token does earn is recorded: once it shows, it is the only one (the page views wrote none).
    expect((await adminCall(stack.gateway, 'GET', '/usage/top', undefined, narrow.token)).status).toBe(403);
    await until('the refusal in the audit', async () => (await refusalsOf()) > 0, 5_000);
    expect(await refusalsOf()).toBe(1);
  });

  it("asks a token limited to its own consumers for none of the fleet's usage: its page views write no refusal, its consumer's usage shows", async () => {
    // consumers:write only to make a consumer of its own (an own-consumers token reaches no other).
    const own = await createToken(['consumers:read', 'consumers:write', 'usage:read'], unique('own'), {
      ownConsumersOnly: true,
    });
    const name = unique('own-consumer');
    const created = await adminCall(stack.gateway, 'POST', '/consumers', { name, plan: 'free' }, own.token);
    expect(created.status).toBe(201);
    const key = (created.body as { key: { key: string } }).key.key;
    for (let i = 0; i < 3; i += 1)
      await (
        await fetch(`${stack.gateway.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
      ).arrayBuffer();
    await stack.gateway.app.get(UsageService).flush();
    const refusalsOf = () => authRefusalsOf(own.name);
    const client = new ConsoleClient(console_.url);
    await client.signIn(own.token);
    const overview = await client.request('GET', '/');
    expect(overview.status).toBe(200);
    // The fleet's usage is an operator's (the admin policy's fleet-only routes): not asked, not shown.
    expect(overview.text).not.toMatch(/<h2[^>]*>(Requests by outcome|Top consumers)/);
    const page = await client.request('GET', `/consumers/${name}`);
    expect(page.status).toBe(200);
    // Its own consumer's usage, which the token may read: the current windows and the 30-day history, 3 requests.
    const windows = /data-testid="windows-table">([\s\S]*?)<\/table>/.exec(page.text)![1];
    const used = [
      ...windows.matchAll(/<tr[^>]*><th scope="row"[^>]*>[^<]+<\/th><td[^>]*>[^<]+<\/td><td[^>]*>([^<]+)<\/td>/g),
    ];
    expect(used.length).toBeGreaterThan(0);
    expect(used.map((m) => m[1])).toEqual(used.map(() => '3'));
    expect(page.text).toContain(`${name}: requests by outcome, last 30 days`);
    const history = /data-testid="usage-table"[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(page.text)![1];
    const requests = [...history.matchAll(/<\/th><td>([^<]+)<\/td>/g)].map((m) => Number(m[1]));
    expect(requests.reduce((sum, n) => sum + n, 0)).toBe(3);
    // No billing or credit form: those routes are fleet-only too.
    expect(page.text).not.toContain(`action="/consumers/${name}/billing`);
    // A refusal the token does earn is recorded: once it shows, it is the only one (the page views wrote none).
    expect((await adminCall(stack.gateway, 'GET', '/usage/top', undefined, own.token)).status).toBe(403);
    await until('the refusal in the audit', async () => (await refusalsOf()) > 0, 5_000);
    expect(await refusalsOf()).toBe(1);
  });

  it('creates a token shown once, revokes it; issues a key shown once; disables and enables; decides plan requests', async () => {
    const admin = await createToken([
      'consumers:read',
      'consumers:write',
      'keys:write',
      'usage:read',
      'audit:read',
      'tokens:admin',
      'plan-requests:read',
      'plan-requests:review',
    ]);
    const client = new ConsoleClient(console_.url);
    await client.signIn(admin.token);

    const created = await client.submit('/tokens', '/tokens', {
      name: 'made-in-console',
      scopes: ['consumers:read', 'audit:read'],
    });
    // Post/Redirect/Get: the token is on the page the redirect leads to, once.
    expect([created.status, created.location]).toEqual([303, '/tokens/new']);
    const shownPage = await client.request('GET', '/tokens/new');
    const shown = /data-testid="new-token" id="new-token">([^<]+)</.exec(shownPage.text)![1];
    expect((await client.request('GET', '/tokens/new')).text).not.toContain(shown);
    expect((await adminCall(stack.gateway, 'GET', '/token', undefined, shown)).body).toMatchObject({
      name: 'made-in-console',
      scopes: ['consumers:read', 'audit:read'],
    });
    expect((await client.request('GET', '/tokens')).text).not.toContain(shown);
    const escalation = await client.submit('/tokens', '/tokens', { name: 'too-much', scopes: ['import'] });
    expect(escalation.status).toBe(403);
    expect(escalation.text).toContain('value="too-much"');
    const id = ((await adminCall(stack.gateway, 'GET', '/tokens')).body as Array<{ id: string; name: string }>).find(
      (t) => t.name === 'made-in-console',
    )!.id;
    expect((await client.submit(`/tokens/${id}/revoke`, `/tokens/${id}/revoke`)).location).toBe('/tokens');
    expect((await client.request('GET', '/tokens')).text).toContain('Token &quot;made-in-console&quot; is revoked.');

    const issued = await client.submit('/consumers/acme-http', '/consumers/acme-http/keys');
    expect([issued.status, issued.location]).toEqual([303, '/consumers/acme-http/keys/new']);
    expect((await client.request('GET', '/consumers/acme-http/keys/new')).text).toMatch(
      /data-testid="new-key" id="new-key">petk_/,
    );
    const reloaded = await client.request('GET', '/consumers/acme-http/keys/new');
    expect(reloaded.status).toBe(200);
    expect(reloaded.text).not.toMatch(/petk_[A-Za-z0-9_-]{20,}/);
    expect(reloaded.text).toContain('This key was shown once');
    await client.submit('/consumers/acme-http', '/consumers/acme-http/disable');
    expect(
      ((await adminCall(stack.gateway, 'GET', '/consumers/acme-http')).body as { disabledAt: string | null })
        .disabledAt,
    ).not.toBeNull();
    const disabledPage = await client.request('GET', '/consumers/acme-http');
    expect(disabledPage.text).toContain('is disabled');
    expect(disabledPage.text).toContain('>Enable</button>');
    await client.submit('/consumers/acme-http', '/consumers/acme-http/enable');
    expect(
      ((await adminCall(stack.gateway, 'GET', '/consumers/acme-http')).body as { disabledAt: string | null })
        .disabledAt,
    ).toBeNull();

    // A refusal shows next to the form, in the console's words (never the API's), with what was typed kept.
    const refused = await client.submit('/consumers/acme-http', '/consumers/acme-http/plan', {
      plan: 'enterprise',
      perMinute: '',
      perDay: '',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(
      /<p class="error-text" id="plan-error" role="alert">Enterprise has no limits of its own/,
    );
    expect(refused.text).toContain('<option value="enterprise" selected>');
    const badNumber = await client.submit('/consumers/acme-http', '/consumers/acme-http/plan', {
      plan: 'pro',
      perMinute: '0',
      perDay: 'lots',
    });
    expect(badNumber.status).toBe(400);
    expect(badNumber.text).toMatch(/id="plan-error" role="alert">These limits were not accepted/);
    expect(badNumber.text).not.toContain('perMinute must be');
    expect(badNumber.text).toContain('value="lots"');
    // An admin API refusal of an action without fields (a flash): revoking an unknown key.
    const unknownKey = await client.submit(
      '/consumers/acme-http',
      '/consumers/acme-http/keys/00000000-0000-4000-8000-000000000000/revoke',
    );
    expect(unknownKey.location).toBe('/consumers/acme-http');
    expect((await client.request('GET', '/consumers/acme-http')).text).toMatch(
      /flash-error[^>]*>No such key of this consumer\.</,
    );

    for (const [name, decision, form] of [
      ['plan-up', 'approve', { perMinute: '', perDay: '' }],
      ['plan-no', 'decline', { note: 'Please tell us more about the traffic.' }],
    ] as const) {
      expect((await adminCall(stack.gateway, 'POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
      const asked = await adminCall(stack.gateway, 'POST', '/plan-requests', {
        consumer: name,
        requestedPlan: 'pro',
        expectedVolume: '5,000 a day',
      });
      const requestId = (asked.body as { id: string }).id;
      expect((await client.submit('/plan-requests', `/plan-requests/${requestId}/${decision}`, form)).location).toBe(
        '/plan-requests',
      );
    }
    expect(((await adminCall(stack.gateway, 'GET', '/consumers/plan-up')).body as { plan: string }).plan).toBe('pro');
    const declined = (await adminCall(stack.gateway, 'GET', '/plan-requests?status=declined')).body as {
      items: Array<{ consumer: string; note: string; decidedBy: string }>;
    };
    expect(declined.items.find((r) => r.consumer === 'plan-no')).toMatchObject({
      note: 'Please tell us more about the traffic.',
      decidedBy: admin.name,
    });
  });

  it('says so, with a 503 page, when the admin API cannot be reached (never a stack trace)', async () => {
    const orphan = await startConsole('http://127.0.0.1:1');
    try {
      const reply = await new ConsoleClient(orphan.url).signIn('adm_any-token');
      expect(reply.status).toBe(503);
      expect(reply.text).toContain('The admin API is unavailable');
      expect(reply.text).toContain('cannot be reached');
      // No internal address on a page (the portal's are public): it is in the log.
      expect(reply.text).not.toContain('127.0.0.1:1');
      expect(reply.text).not.toMatch(/at \w+ \(/);
    } finally {
      await orphan.close();
    }
  });
});
