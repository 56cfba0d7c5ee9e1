import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdminApiError } from './admin-api-error';
import { REFUSALS } from './refusals';
import {
  readWebhookForm,
  targetRefusalText,
  WEBHOOK_DESCRIPTION_MAX,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_FORM_ERRORS,
  WEBHOOK_URL_MAX,
  webhookRefusal,
} from './webhook-views';

const document = JSON.parse(readFileSync(join(__dirname, '../../../gateway/admin-openapi.json'), 'utf8')) as {
  components: {
    schemas: Record<string, { properties: Record<string, { maxLength?: number; items?: { enum?: string[] } }> }>;
  };
};
const createDto = document.components.schemas.CreateWebhookEndpointDto.properties;

describe('the webhook endpoint form', () => {
  it('holds the admin document’s bounds and event types', () => {
    expect(WEBHOOK_URL_MAX).toBe(createDto.url.maxLength);
    expect(WEBHOOK_DESCRIPTION_MAX).toBe(createDto.description.maxLength);
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual([...(createDto.eventTypes.items?.enum ?? [])].sort());
  });

  it('reads a valid form as the admin API’s body: no type checked is every type (null)', () => {
    expect(readWebhookForm({ url: ' https://hooks.example.com/a ', description: '', eventTypes: undefined })).toEqual({
      input: { url: 'https://hooks.example.com/a', eventTypes: null },
    });
    expect(
      readWebhookForm({
        url: 'http://h.example/x',
        description: 'Ops',
        eventTypes: ['credits.exhausted', 'credits.exhausted'],
      }),
    ).toEqual({ input: { url: 'http://h.example/x', description: 'Ops', eventTypes: ['credits.exhausted'] } });
  });

  it('says what is wrong next to each field, what was typed kept', () => {
    const read = readWebhookForm({ url: 'ftp://h.example/', description: 'a\u0000b', eventTypes: 'user.deleted' });
    expect(read).toEqual({
      refused: {
        typed: { url: 'ftp://h.example/', description: 'a\u0000b', eventTypes: ['user.deleted'] },
        errors: {
          url: WEBHOOK_FORM_ERRORS.url,
          description: expect.any(String),
          eventTypes: WEBHOOK_FORM_ERRORS.eventTypes,
        },
      },
    });
    expect(readWebhookForm({ url: `https://h.example/${'a'.repeat(WEBHOOK_URL_MAX)}` })).toMatchObject({
      refused: { errors: { url: WEBHOOK_FORM_ERRORS.urlLength } },
    });
  });

  it('puts the admin API’s refusal by its code: a refused target next to the address, naming its reason, the rest above the form', () => {
    const typed = { url: 'http://10.0.0.1/', description: '', eventTypes: [] };
    const refused = (reason?: string) =>
      new AdminApiError(400, 'WEBHOOK_TARGET_REFUSED', 'any words (loopback)', reason ? { reason } : {});
    expect(webhookRefusal(refused('private'), typed)).toEqual({
      typed,
      errors: { url: 'Webhooks are never sent to this address: it is a private network address.' },
    });
    // The reason comes from the details, never from the message; one the page does not know gets the general words.
    expect(webhookRefusal(refused('metadata'), typed).errors.url).toContain('cloud metadata address');
    expect(webhookRefusal(refused('some_new_class'), typed).errors.url).toBe(WEBHOOK_FORM_ERRORS.target);
    expect(webhookRefusal(refused(), typed).errors.url).toBe(WEBHOOK_FORM_ERRORS.target);
    // Any other 400 is not about the address: above the form, in the shared words.
    const invalid = webhookRefusal(new AdminApiError(400, 'VALIDATION_FAILED', 'url is not a target'), typed);
    expect(invalid.errors).toEqual({});
    expect(invalid.failed).toBe(REFUSALS.VALIDATION_FAILED);
    const capped = webhookRefusal(new AdminApiError(409, 'WEBHOOK_ENDPOINT_LIMIT', 'any words'), typed);
    expect(capped.errors).toEqual({});
    expect(capped.failed).toContain('remove one');
  });

  it('has words for every reason the admin document names', () => {
    const reasons = (
      document.components.schemas.Error.properties.details as unknown as {
        properties: { reason: { enum: string[] } };
      }
    ).properties.reason.enum;
    expect(reasons).toEqual(expect.arrayContaining(['loopback', 'private', 'metadata', 'https_required']));
    for (const reason of reasons) expect([reason, targetRefusalText(reason)]).not.toContain(WEBHOOK_FORM_ERRORS.target);
  });
});
