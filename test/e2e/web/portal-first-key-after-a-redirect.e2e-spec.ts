import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { adminCall } from '../../support/gateway';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';
const KEY_SHOWN = /data-testid="new-key" id="new-key">([^<]+)</;

/**
 * "Verify my email" answers with Post/Redirect/Get, as every later key does: the POST makes the account's consumer
 * and first key, holds the key in the session and answers 303 to /keys/new, which shows it once. A reload of that
 * page is a GET: no re-posted form ("Form expired", 403), no second key, and the key is not shown again. The key is
 * never in a URL (issue #48.6).
 */
describe('the portal’s first key, after "Verify my email"', () => {
  let stack: PortalStack;

  beforeAll(async () => {
    stack = await startPortalStack();
  }, 120_000);
  afterAll(() => stack?.close());

  it('is shown once by the page a 303 leads to; a reload of that page is no "Form expired" and mints no second key', async () => {
    const email = `first-key-${Date.now()}@example.com`;
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');

    const posted = await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify');
    expect(posted).toMatchObject({ status: 303, location: '/keys/new' });
    expect(posted.text).not.toMatch(KEY_SHOWN);

    const shown = await developer.get(posted.location!);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('Welcome: here is your API key');
    const key = KEY_SHOWN.exec(shown.text)?.[1] ?? '';
    expect(key).toMatch(/^petk_\S{20,}/);
    expect(posted.location).not.toContain(key);
    const pets = await fetch(`${stack.gateway.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
    expect(pets.status).toBe(200);

    // The browser's reload: the same GET again. The page says the key was shown once, in the signed-in session.
    const reloaded = await developer.get(posted.location!);
    expect(reloaded.status).toBe(200);
    expect(reloaded.text).not.toContain('Form expired');
    expect(reloaded.text).toContain('Key shown once');
    expect(reloaded.text).not.toMatch(KEY_SHOWN);
    expect(reloaded.text).not.toContain(key);
    expect(reloaded.text).toContain('Sign out');

    // One consumer with one key: neither the reload nor the redirect made another.
    const found = await adminCall(stack.gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`);
    const items = (found.body as { items: Array<{ name: string; keys: unknown[] }> }).items;
    expect(items).toHaveLength(1);
    const consumer = await adminCall(stack.gateway, 'GET', `/consumers/${items[0].name}`);
    expect((consumer.body as { keys: unknown[] }).keys).toHaveLength(1);
    expect((await developer.get('/dashboard')).status).toBe(200);
  });
});
