import type { Request } from 'express';
import { publicLinkField } from './next-link';

/** Express's compiled `trust proxy` for a balancer at 10.0.0.1 (TRUST_PROXY=10.0.0.1). */
const trustBalancer = (address: string | undefined) => address === '10.0.0.1';

/**
 * The parts of a request the rewrite reads: headers, the socket and the app's compiled `trust proxy`. By default
 * the request came through the trusted balancer, which said (X-Forwarded-Proto) the client used `protocol`.
 */
const request = (originalUrl: string, ...rest: [host?: string | undefined, protocol?: string]) =>
  ({
    originalUrl,
    headers: { host: rest.length > 0 ? rest[0] : 'api.example.test', 'x-forwarded-proto': rest[1] ?? 'https' },
    socket: { remoteAddress: '10.0.0.1' },
    app: { get: (name: string) => (name === 'trust proxy fn' ? trustBalancer : undefined) },
  }) as unknown as Request;

/** A request with the given headers from `remoteAddress`, on a plain or TLS socket. */
const from = (remoteAddress: string, headers: Record<string, string>, encrypted = false) =>
  ({
    originalUrl: '/v1/pets',
    headers,
    socket: { remoteAddress, encrypted },
    app: { get: (name: string) => (name === 'trust proxy fn' ? trustBalancer : undefined) },
  }) as unknown as Request;

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

  it('believes X-Forwarded-Proto and X-Forwarded-Host only from a trusted proxy, as Express does', () => {
    const forwarded = { host: 'gateway.internal:3000', 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'api.example.test , other' };
    const next = (req: Request) => publicLinkField(NEXT, req, '/pets')!.split(';')[0];
    expect(next(from('10.0.0.1', forwarded))).toBe('<https://api.example.test/v1/pets?limit=7&status=sold&after=AbC-_9>');
    expect(next(from('203.0.113.9', forwarded))).toBe('<http://gateway.internal:3000/v1/pets?limit=7&status=sold&after=AbC-_9>');
    expect(next(from('203.0.113.9', forwarded, true))).toBe('<https://gateway.internal:3000/v1/pets?limit=7&status=sold&after=AbC-_9>');
    expect(next(from('10.0.0.1', { host: 'api.example.test', 'x-forwarded-proto': '' }, true))).toBe('<https://api.example.test/v1/pets?limit=7&status=sold&after=AbC-_9>');
  });
});
