import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { adminCall } from '../../support/gateway';
import { PortalStack, startPortalStack } from '../../support/portal';
import { linkIn, PortalVisitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';
const UTC = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC';

/** The dashboard's plan request sentence, its tags removed and its spaces collapsed. */
const requestSentence = (html: string) =>
  (/data-testid="plan-request"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * The dashboard says what became of the developer's plan request in words that read: "was approved on <date>", "was
 * declined on <date>", "is pending: …" (not "is approved since <date>", issue #48.10).
 */
describe('the portal’s plan request sentence', () => {
  let stack: PortalStack;

  beforeAll(async () => {
    stack = await startPortalStack();
  }, 120_000);
  afterAll(() => stack?.close());

  async function developerWithRequest(label: string) {
    const email = `${label}-${Date.now()}@example.com`;
    const developer = new PortalVisitor(stack.portal.url);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await stack.portal.app.get(AfterAnswer).drain();
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    expect((await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(
      303,
    );
    const asked = await developer.submit('/plan', { plan: 'pro', expectedVolume: '500 a day', message: '' });
    expect(asked.status).toBe(303);
    const found = await adminCall(stack.gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`);
    const consumer = (found.body as { items: Array<{ name: string }> }).items[0].name;
    const requests = await adminCall(stack.gateway, 'GET', `/plan-requests?consumer=${consumer}`);
    const id = (requests.body as { items: Array<{ id: string }> }).items[0].id;
    return { developer, id };
  }

  it('says a pending request waits, and an answered one was approved or declined on its date', async () => {
    const approved = await developerWithRequest('approved');
    const pending = requestSentence((await approved.developer.get('/dashboard')).text);
    expect(pending).toMatch(
      new RegExp(`^Your request for the Pro plan, sent ${UTC}, is pending: the operators have not answered it yet\\.$`),
    );
    expect((await adminCall(stack.gateway, 'POST', `/plan-requests/${approved.id}/approve`, {})).status).toBe(200);
    const yes = requestSentence((await approved.developer.get('/dashboard')).text);
    expect(yes).toMatch(new RegExp(`^Your request for the Pro plan, sent ${UTC}, was approved on ${UTC}\\.$`));

    const declined = await developerWithRequest('declined');
    const note = 'Pro needs a company address.';
    expect((await adminCall(stack.gateway, 'POST', `/plan-requests/${declined.id}/decline`, { note })).status).toBe(
      200,
    );
    const no = requestSentence((await declined.developer.get('/dashboard')).text);
    expect(no).toMatch(
      new RegExp(
        `^Your request for the Pro plan, sent ${UTC}, was declined on ${UTC}\\. Note from the operators: ${note}$`,
      ),
    );
    for (const sentence of [pending, yes, no]) expect(sentence).not.toContain('since');
  });
});
