import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { ConsoleClient, ConsoleUnderTest, startConsole } from '../../support/console';
import { adminCall } from '../../support/gateway';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

/** The text of each cell of a table row's HTML, its tags (the cells' word spans among them) removed. */
const cellsOf = (row: string): string[] =>
  [...row.matchAll(/<t[hd]\b[^>]*>([\s\S]*?)<\/t[hd]>/g)].map((m) => m[1].replace(/<[^>]+>/g, '').trim());

const PASSWORD = 'a long enough passphrase';

/**
 * Operators can tell who asked (issue #48.7): a plan request made in the portal names its developer's email on the
 * console's plan requests page and in the overview's pending list, and the consumer page's audit trail says
 * "portal for <email>" as the audit log does, not "portal" alone. The admin API keeps who asked
 * (`requestedBy`): the person the portal named, or the token that asked on its own.
 */
describe('who asked, in the console', () => {
  let stack: PortalStack;
  let operatorConsole: ConsoleUnderTest;
  let operator: ConsoleClient;
  let consumer: string;
  const email = `asks-${Date.now()}@example.com`;

  beforeAll(async () => {
    stack = await startPortalStack();
    operatorConsole = await startConsole(stack.gateway.adminUrl);
    operator = new ConsoleClient(operatorConsole.url);
    expect((await operator.signIn(stack.gateway.adminToken)).status).toBe(303);
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    expect((await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(
      303,
    );
    const asked = await developer.submit('/plan', { plan: 'pro', expectedVolume: '500 a day', message: 'Launch' });
    expect(asked.status).toBeLessThan(400);
    const found = await adminCall(stack.gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`);
    consumer = (found.body as { items: Array<{ name: string }> }).items[0].name;
  }, 120_000);
  afterAll(async () => {
    await operatorConsole?.close();
    await stack?.close();
  });

  it('keeps who asked in the admin API: the person the portal named', async () => {
    const page = await adminCall(stack.gateway, 'GET', `/plan-requests?consumer=${consumer}`);
    const [request] = (page.body as { items: Array<{ requestedBy: string | null }> }).items;
    expect(request.requestedBy).toMatch(new RegExp(`^account:[0-9a-f-]{36} ${email.replace(/[.]/g, '\\.')}$`));
  });

  it('names the developer’s email on the plan requests page and in the overview’s pending list', async () => {
    const requests = await operator.request('GET', '/plan-requests');
    const card = new RegExp(
      `<h2 id="req-[^"]+"><a href="/consumers/${consumer}">${consumer}</a>: Free → Pro</h2>[\\s\\S]*?</dl>`,
    ).exec(requests.text)?.[0];
    expect(card).toContain(` by <span data-testid="requester">${email}</span>`);
    const overview = await operator.request('GET', '/');
    const row = new RegExp(`<tr[^>]*><th[^>]*><a href="/consumers/${consumer}">${consumer}</a></th>.*?</tr>`).exec(
      overview.text,
    )?.[0];
    expect(cellsOf(row ?? '')).toContain(email);
  });

  it('says "portal for <email>" in the consumer page’s audit trail, as the audit log does', async () => {
    const page = await operator.request('GET', `/consumers/${consumer}`);
    const trail = /<table data-testid="consumer-audit"[^>]*>([\s\S]*?)<\/table>/.exec(page.text)?.[1] ?? '';
    const row = [...trail.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)]
      .map((m) => cellsOf(m[1]))
      .find((cells) => cells[2] === 'plan-request.create');
    // The portal's token (named `portal-<suffix>` by the test's stack), then the developer.
    expect(row?.[1]).toMatch(new RegExp(`^portal(-\\w+)? for ${email.replace(/[.]/g, '\\.')}$`));
  });
});
