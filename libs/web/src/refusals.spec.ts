import { CONFLICT_ERROR_CODES } from '@app/errors';
import { AdminApiError } from './admin-api-error';
import { REFUSALS, refusalText } from './refusals';

describe('refusals: a page says what the admin API refused in its own words, by code', () => {
  it('has a sentence for every conflict code, and never shows the API message', () => {
    for (const code of CONFLICT_ERROR_CODES) {
      const error = new AdminApiError(409, code, `raw message of ${code} (requestedPlan must differ)`);
      expect(refusalText(error)).toBe(REFUSALS[code]);
      expect(refusalText(error)).not.toContain('raw message');
    }
  });

  it("takes the page's own sentence first, and a generic one for a code it does not know", () => {
    const pending = new AdminApiError(409, 'PLAN_REQUEST_PENDING', 'There is a pending request for consumer x.');
    expect(refusalText(pending, { PLAN_REQUEST_PENDING: 'Yours waits.' })).toBe('Yours waits.');
    const unknown = new AdminApiError(418, 'TEAPOT', 'I am a teapot');
    expect(refusalText(unknown)).toBe('This could not be done: try again, or ask an operator.');
  });
});
