import { Reply } from '../../support/http';
import { OpenApiContract } from '../../support/openapi-contract';
import { withStack } from '../../support/with-stack';

const rateHeaders = {
  'x-ratelimit-limit': '60',
  'x-ratelimit-remaining': '59',
  'x-ratelimit-reset': '1800000000',
  'ratelimit-policy': '"minute";q=60;w=60',
  ratelimit: '"minute";r=59;t=60',
  'x-request-id': 'abc',
  'cache-control': 'private, no-store',
  'content-type': 'application/json; charset=utf-8',
};
const reply = (status: number, body: unknown, headers: Record<string, string> = rateHeaders): Reply => ({
  status,
  headers: new Headers(headers),
  text: JSON.stringify(body),
  body,
});

/** The contract checker must catch what it claims to catch, or the contract tests would prove nothing. */
describe('OpenAPI contract checker', () => {
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', gateway: {} });

  let contract: OpenApiContract;
  beforeAll(async () => {
    contract = await OpenApiContract.fetch(stack.gateway.url);
  });

  it('accepts a conforming reply', () => {
    expect(() =>
      contract.check('GET', '/v1/pets?limit=1', reply(200, [{ id: 1, name: 'Rex', categoryId: 2, status: 'sold' }])),
    ).not.toThrow();
    expect(() =>
      contract.check('GET', '/v1/pets/7', reply(404, { code: 'NOT_FOUND', message: 'No pet', status: 404 })),
    ).not.toThrow();
  });

  it.each([
    ['a pet without name', '/v1/pets', reply(200, [{ id: 1, categoryId: 2 }]), "must have required property 'name'"],
    [
      'an unknown status',
      '/v1/pets',
      reply(200, [{ id: 1, name: 'Rex', categoryId: 2, status: 'adopted' }]),
      'must be equal to one of the allowed values',
    ],
    ['an id as a string', '/v1/pets/1', reply(200, { id: '1', name: 'Rex', categoryId: 2 }), 'must be integer'],
    [
      'a missing rate-limit header',
      '/v1/pets',
      reply(200, [], { ...rateHeaders, 'x-ratelimit-remaining': '' }),
      'header X-RateLimit-Remaining is not an integer',
    ],
    [
      'a missing Cache-Control',
      '/v1/pets',
      reply(200, [], Object.fromEntries(Object.entries(rateHeaders).filter(([name]) => name !== 'cache-control'))),
      'header Cache-Control is missing',
    ],
    [
      'an undocumented status',
      '/v1/pets',
      reply(418, { code: 'X', message: 'x', status: 418 }),
      'status 418 is not documented',
    ],
    ['an unknown operation answered 200', '/v1/cats', reply(200, []), 'no such operation'],
    [
      'an Error without code',
      '/v1/pets/1',
      reply(404, { message: 'x', status: 404 }),
      "must have required property 'code'",
    ],
  ])('rejects %s', (_case, path, bad, message) => {
    expect(() => contract.check('GET', path, bad)).toThrow(message);
  });
});
