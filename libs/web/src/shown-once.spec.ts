import type { Request } from 'express';
import { holdShownOnce, takeShownOnce } from './shown-once';

describe('shown once (Post/Redirect/Get of a secret)', () => {
  it('gives the held secret to the first read of its kind only', () => {
    const request = { session: {} } as unknown as Request;
    holdShownOnce(request, 'portal.key', { secret: 'petk_secret', details: { rotated: { hint: 'petk_old…' } } });
    expect(takeShownOnce(request, 'console.token')).toBeUndefined();
    expect(takeShownOnce(request, 'portal.key')).toEqual({
      secret: 'petk_secret',
      details: { rotated: { hint: 'petk_old…' } },
    });
    expect(takeShownOnce(request, 'portal.key')).toBeUndefined();
    expect(request.session.shownOnce).toBeUndefined();
  });
});
