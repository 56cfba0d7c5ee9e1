import { ApiError } from '@app/errors';
import { AdminActor, ANONYMOUS_ACTOR, ROOT_ACTOR } from '../access/admin-context';
import { endUserOf } from './end-user.interceptor';

const web: AdminActor = { ...ANONYMOUS_ACTOR, id: 'web-id', name: 'portal', actsForUsers: true };
const plain: AdminActor = { ...ANONYMOUS_ACTOR, id: 'plain-id', name: 'ci' };

function refusal(headers: Record<string, string | string[]>, actor: AdminActor): string | undefined {
  try {
    endUserOf(headers, actor);
    return undefined;
  } catch (error) {
    return error instanceof ApiError ? error.code : String(error);
  }
}

describe('endUserOf (X-On-Behalf-Of, X-End-User-Address)', () => {
  it('names the end user for root and a token that acts for users; nobody when no header is sent', () => {
    const headers = { 'x-on-behalf-of': ' operator:alice ', 'x-end-user-address': '2001:db8::1' };
    expect(endUserOf(headers, web)).toEqual({ onBehalfOf: 'operator:alice', address: '2001:db8::1' });
    expect(endUserOf({ 'x-end-user-address': '192.0.2.1' }, ROOT_ACTOR)).toEqual({
      onBehalfOf: null,
      address: '192.0.2.1',
    });
    expect(endUserOf({}, plain)).toBeUndefined();
  });

  it('refuses the headers from any other token (403), and values that are not a label or an address (400)', () => {
    expect(refusal({ 'x-on-behalf-of': 'account:1 a@b.test' }, plain)).toBe('FORBIDDEN');
    expect(refusal({ 'x-end-user-address': '192.0.2.1' }, plain)).toBe('FORBIDDEN');
    expect(refusal({ 'x-on-behalf-of': 'a'.repeat(321) }, web)).toBe('VALIDATION_FAILED');
    expect(refusal({ 'x-on-behalf-of': 'a'.repeat(320) }, web)).toBeUndefined();
    expect(refusal({ 'x-on-behalf-of': 'tab\there' }, web)).toBe('VALIDATION_FAILED');
    expect(refusal({ 'x-on-behalf-of': '' }, web)).toBe('VALIDATION_FAILED');
    expect(refusal({ 'x-on-behalf-of': 'zo\u00e9' }, web)).toBe('VALIDATION_FAILED');
    expect(refusal({ 'x-end-user-address': 'localhost' }, web)).toBe('VALIDATION_FAILED');
    expect(refusal({ 'x-end-user-address': ['192.0.2.1', '192.0.2.2'] }, web)).toBe('VALIDATION_FAILED');
  });
});
