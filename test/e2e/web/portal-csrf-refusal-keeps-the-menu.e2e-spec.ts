import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';

/** The header's menu of a page: the nav's links and buttons, in order. */
const menuOf = (html: string) =>
  [...(/<nav aria-label="Main">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? '').matchAll(/<(?:a|button)[^>]*>([^<]+)</g)].map(
    (m) => m[1],
  );

/**
 * A form refused by the CSRF check ("Form expired", 403) is a page of the session it was sent in: a signed-in
 * developer sees the signed-in menu there (Dashboard, Plan, Sign out), not "Create an account" and "Sign in" as if
 * signed out (issue #48.6).
 */
describe('the portal’s CSRF refusal page', () => {
  let stack: PortalStack;

  beforeAll(async () => {
    stack = await startPortalStack();
  }, 120_000);
  afterAll(() => stack?.close());

  it('shows the signed-in menu to a signed-in developer, and the signed-out one to a visitor', async () => {
    const email = `csrf-${Date.now()}@example.com`;
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    expect((await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(
      303,
    );
    const signedInMenu = menuOf((await developer.get('/dashboard')).text);
    expect(signedInMenu).toEqual(['API reference', 'Dashboard', 'Plan', 'Webhooks', 'Sign-in methods', 'Sign out']);

    // A form of the dashboard sent with a token that is not this session's.
    const refused = await developer.submit('/dashboard', { _csrf: 'not-this-sessions-token' }, '/keys');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Form expired');
    expect(menuOf(refused.text)).toEqual(signedInMenu);

    const visitor = new PortalVisitor(stack.portal.url);
    const anonymous = await visitor.submit('/login', { _csrf: 'not-this-sessions-token', email, password: PASSWORD });
    expect(anonymous.status).toBe(403);
    expect(menuOf(anonymous.text)).toEqual(['API reference', 'Create an account', 'Sign in']);
  });
});
