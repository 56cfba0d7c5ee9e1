import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';

/** The form's username field: a read-only input with autocomplete="username" (attributes in any order). */
const usernameField = (html: string) =>
  [...html.matchAll(/<input\b[^>]*>/g)].map((m) => m[0]).find((tag) => /autocomplete="username"/.test(tag));

/**
 * The verification page's form holds a username field (autocomplete="username", read-only, the account's email)
 * beside the password, so a password manager can pair the password it saves or fills with the account (issue
 * #48.10). A dead link's form names nobody.
 */
describe('the portal’s verification form', () => {
  let stack: PortalStack;

  beforeAll(async () => {
    stack = await startPortalStack();
  }, 120_000);
  afterAll(() => stack?.close());

  it('names the link’s account in a read-only username field, on the form and on its wrong-password answer', async () => {
    const email = `verify-form-${Date.now()}@example.com`;
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');

    const form = await developer.get(`/verify?token=${token}`);
    expect(form.status).toBe(200);
    const field = usernameField(form.text);
    expect(field).toBeDefined();
    expect(field).toContain(`value="${email}"`);
    expect(field).toMatch(/\breadonly\b/);
    // In the same form as the password, before it.
    const formHtml = /<form method="post"[^>]*\/verify"[\s\S]*?<\/form>/.exec(form.text)![0];
    expect(formHtml.indexOf('autocomplete="username"')).toBeGreaterThan(-1);
    expect(formHtml.indexOf('autocomplete="username"')).toBeLessThan(
      formHtml.indexOf('autocomplete="current-password"'),
    );

    const wrong = await developer.submit(`/verify?token=${token}`, { token, password: 'not the password' }, '/verify');
    expect(wrong.status).toBe(400);
    expect(usernameField(wrong.text)).toContain(`value="${email}"`);

    expect((await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(
      303,
    );
    // The link is used now: its page names nobody.
    expect(
      usernameField((await new PortalVisitor(stack.portal.url).get(`/verify?token=${token}`)).text),
    ).toBeUndefined();
  });
});
