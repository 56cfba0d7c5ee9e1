import { publicLinkField } from './next-link';

const NEXT = '</pets?limit=7&status=sold&after=AbC-_9>; rel="next"';

describe('publicLinkField', () => {
  it('puts the next page under the public path the client used, as a relative reference without an origin', () => {
    expect(publicLinkField(NEXT, '/v1/pets?limit=7&status=sold', '/pets?limit=7&status=sold')).toBe(
      '</v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"',
    );
  });

  it('puts it under the configured public origin when there is one', () => {
    expect(publicLinkField(NEXT, '/v1/pets?limit=7', '/pets?limit=7', 'https://api.example.test')).toBe(
      '<https://api.example.test/v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"',
    );
    expect(publicLinkField(NEXT, '/v1/pets', '/pets', 'http://localhost:8080')).toBe(
      '<http://localhost:8080/v1/pets?limit=7&status=sold&after=AbC-_9>; rel="next"',
    );
  });

  it('passes on only links to the path the service was called on, never an internal address', () => {
    const field =
      '<http://pets.internal:3001/pets?after=x>; rel="next", </admin>; rel="help", </pets?after=y>; rel="next"; title="a, <b>"';
    expect(publicLinkField(field, '/v1/pets', '/pets', 'https://api.example.test')).toBe(
      '<https://api.example.test/v1/pets?after=y>; rel="next"; title="a, <b>"',
    );
    expect(
      publicLinkField('<http://pets.internal:3001/pets?after=x>; rel="next"', '/v1/pets', '/pets'),
    ).toBeUndefined();
  });

  it('gives nothing when the service sent no link, or nothing that parses, or the public path is not a plain path', () => {
    expect(publicLinkField(undefined, '/v1/pets', '/pets')).toBeUndefined();
    expect(publicLinkField('rel="next"', '/v1/pets', '/pets')).toBeUndefined();
    expect(publicLinkField('</pets?after=a b>; rel="next"', '/v1/pets', '/pets')).toBeUndefined();
    expect(publicLinkField(NEXT, '/v1/pets<x>', '/pets')).toBeUndefined();
  });

  it('joins repeated Link fields', () => {
    expect(
      publicLinkField(
        ['</pets?after=a>; rel="next"', '</pets?limit=1>; rel="first"'],
        '/v1/pets?limit=1',
        '/pets?limit=1',
      ),
    ).toBe('</v1/pets?after=a>; rel="next", </v1/pets?limit=1>; rel="first"');
  });

  it('splits link-values only on commas outside targets and quoted strings, escaped quotes included', () => {
    const field = '</pets?after=a,b>; rel="next"; title="x, \\"y, z\\" w", </pets?after=c>; rel="prev",, </other>';
    expect(publicLinkField(field, '/v1/pets', '/pets')).toBe(
      '</v1/pets?after=a,b>; rel="next"; title="x, \\"y, z\\" w", </v1/pets?after=c>; rel="prev"',
    );
  });
});
