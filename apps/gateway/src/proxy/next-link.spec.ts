import type { Request } from 'express';
import { publicLinkField } from './next-link';

/** The parts of an Express request the rewrite reads (protocol and host already decided by `trust proxy`). */
const request = (originalUrl: string, ...rest: [host?: string | undefined, protocol?: string]) =>
  ({ originalUrl, host: rest.length > 0 ? rest[0] : 'api.example.test', protocol: rest[1] ?? 'https' }) as unknown as Request;

const NEXT = '</pets?limit=7&status=sold&after=AbC-_9>; rel="next"';

describe('publicLinkField', () => {
  it('puts the next page under the origin and the public path the client used', () => {
    expect(publicLinkField(NEXT, request('/v1/pets?limit=7&status=sold'), '/pets?limit=7&status=sold')).toBe(
      '<https://api.example.test/v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"',
    );
  });

  it('keeps the port and plain http when that is what the client used', () => {
    expect(publicLinkField(NEXT, request('/v1/pets', 'localhost:3000', 'http'), '/pets')).toBe(
      '<http://localhost:3000/v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"',
    );
    expect(publicLinkField(NEXT, request('/v1/pets', '[::1]:8080', 'http'), '/pets')).toBe(
      '<http://[::1]:8080/v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"',
    );
  });

  it.each([
    ['a host with a path in it', 'evil.example/x?'],
    ['a host with angle brackets', 'a>b'],
    ['a host with a user part', 'user@evil.example'],
    ['no host at all', undefined],
  ])('falls back to a relative link for %s', (_case, host) => {
    expect(publicLinkField(NEXT, request('/v1/pets', host), '/pets')).toBe('</v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"');
  });

  it('falls back to a relative link for a protocol other than http(s)', () => {
    expect(publicLinkField(NEXT, request('/v1/pets', 'api.example.test', 'javascript'), '/pets')).toBe(
      '</v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"',
    );
  });

  it('passes on only links to the path the service was called on, never an internal address', () => {
    const field = '<http://pets.internal:3001/pets?after=x>; rel="next", </admin>; rel="help", </pets?after=y>; rel="next"; title="a, <b>"';
    expect(publicLinkField(field, request('/v1/pets'), '/pets')).toBe('<https://api.example.test/v1/pets?after=y>; rel="next"; title="a, <b>"');
    expect(publicLinkField('<http://pets.internal:3001/pets?after=x>; rel="next"', request('/v1/pets'), '/pets')).toBeUndefined();
  });

  it('gives nothing when the service sent no link, or nothing that parses', () => {
    expect(publicLinkField(undefined, request('/v1/pets'), '/pets')).toBeUndefined();
    expect(publicLinkField('rel="next"', request('/v1/pets'), '/pets')).toBeUndefined();
    expect(publicLinkField('</pets?after=a b>; rel="next"', request('/v1/pets'), '/pets')).toBeUndefined();
  });

  it('joins repeated Link fields', () => {
    expect(publicLinkField(['</pets?after=a>; rel="next"', '</pets?limit=1>; rel="first"'], request('/v1/pets'), '/pets?limit=1')).toBe(
      '<https://api.example.test/v1/pets?after=a>; rel="next", <https://api.example.test/v1/pets?limit=1>; rel="first"',
    );
  });
});
