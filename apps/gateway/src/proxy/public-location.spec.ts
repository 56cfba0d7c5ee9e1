import { publicLocation } from './public-location';

describe('publicLocation', () => {
  it("puts the service's /pets/{id} under the public prefix", () => {
    expect(publicLocation('/pets/42')).toBe('/v1/pets/42');
  });

  it.each([
    undefined,
    ['/pets/1', '/pets/2'],
    'http://pets.internal:3001/pets/42',
    '/pets/0',
    '/pets/42/x',
    '/pets/abc',
    '/admin/42',
    '//evil.example/pets/1',
  ])('passes nothing else on: %p', (value) => expect(publicLocation(value)).toBeUndefined());
});
