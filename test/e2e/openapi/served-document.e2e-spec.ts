import { withStack } from '../../support/with-stack';

interface Operation {
  operationId: string;
  tags: string[];
  deprecated?: boolean;
  description?: string;
  security: Array<Record<string, string[]>>;
  'x-stability'?: string;
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref?: string } }> }
  >;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
}
type Schema = {
  required?: string[];
  properties: Record<string, Record<string, unknown>>;
  enum?: string[];
  type?: string;
  items?: unknown;
};

/** The served OpenAPI document says what the spec says (parts 1, 2, 4, 5, 7, 8 and 9). */
describe('the OpenAPI document', () => {
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', gateway: {} });

  let doc: {
    openapi: string;
    info: { version: string };
    servers: Array<{ url: string }>;
    tags: Array<{ name: string }>;
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { type: string; scheme: string }> };
  };
  const op = (path: string, method: string) => doc.paths[path][method];
  const all = () => [op('/pets', 'get'), op('/pets', 'post'), op('/pets/{petId}', 'get')];

  beforeAll(async () => {
    doc = (await (await fetch(`${stack.gateway.url}/docs-json`)).json()) as typeof doc;
  });

  it('is version 1.0.0, with a relative /v1 server first, then production and staging ending in /v1', () => {
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers.map((s) => s.url)).toEqual([
      '/v1',
      'https://api.petstore.example.com/v1',
      'https://staging-api.petstore.example.com/v1',
    ]);
  });

  it('has the three operations, tagged animals, each behind the bearer scheme, with a stability', () => {
    expect(all().map((o) => o.operationId)).toEqual(['listPets', 'createPet', 'getPet']);
    expect(doc.tags.map((t) => t.name)).toContain('animals');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const o of all()) {
      expect(o.tags).toEqual(['animals']);
      expect(o.security).toEqual([{ bearer: [] }]);
      expect(['stable', 'beta', 'experimental', 'deprecated']).toContain(o['x-stability']);
    }
  });

  it('marks getPet deprecated, with the removal date and the replacement in its description', () => {
    const getPet = op('/pets/{petId}', 'get');
    expect(getPet.deprecated).toBe(true);
    expect(getPet.description).toContain('2030-12-05');
    expect(getPet.description).toContain('GET /pets');
    expect(response(getPet, '200').headers).toHaveProperty('Sunset');
    expect(getPet.responses['410']).toBeDefined();
  });

  /** Follows a local $ref (responses and headers are shared components). */
  const resolve = <T>(value: T | { $ref: string }): T =>
    '$ref' in (value as object)
      ? ((value as { $ref: string }).$ref
          .slice(2)
          .split('/')
          .reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], doc) as T)
      : (value as T);
  type Example = { code: string; status: number };
  type Response = Operation['responses'][string] & {
    content?: Record<
      string,
      { schema: { $ref?: string }; example?: Example; examples?: Record<string, { value: Example }> }
    >;
  };
  const response = (o: Operation, status: string) => resolve<Response>(o.responses[status]);

  it('documents every status the gateway can answer, and 429 with Retry-After and rate-limit headers on every counted answer', () => {
    // 402: prepaid credits spent with no refill scheduled (docs/billing.md), on every counted operation.
    const everywhere = ['400', '401', '402', '403', '408', '429', '431', '500', '502', '503', '504'];
    expect(Object.keys(op('/pets', 'get').responses).sort()).toEqual(['200', ...everywhere].sort());
    expect(Object.keys(op('/pets', 'post').responses).sort()).toEqual(['201', '413', '415', ...everywhere].sort());
    expect(Object.keys(op('/pets/{petId}', 'get').responses).sort()).toEqual(
      ['200', '404', '410', ...everywhere].sort(),
    );
    for (const o of all()) {
      expect(response(o, '429').headers).toHaveProperty('Retry-After');
      for (const status of Object.keys(o.responses)) {
        const documented = response(o, status);
        // 408 and 431 are answered by the HTTP parser, before a request is counted.
        if (status !== '408' && status !== '431') {
          expect(Object.keys(documented.headers ?? {})).toEqual(
            expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
          );
        }
        expect(documented.content?.['application/json']?.schema.$ref).toMatch(
          /#\/components\/schemas\/(Pet|Pets|Error)$/,
        );
      }
    }
    expect(response(op('/pets', 'get'), '200').content!['application/json'].schema.$ref).toBe(
      '#/components/schemas/Pets',
    );
  });

  it('gives each error status its own examples, with the codes it is really sent with', () => {
    const post = op('/pets', 'post');
    const examples = (status: string): Example[] => {
      const media = response(post, status).content!['application/json'];
      return media.example ? [media.example] : Object.values(media.examples!).map((e) => e.value);
    };
    const codes = (status: string) => examples(status).map((e) => e.code);
    expect(codes('400')).toEqual(expect.arrayContaining(['VALIDATION_FAILED', 'MALFORMED_JSON', 'MALFORMED_REQUEST']));
    expect(codes('401')).toEqual(['UNAUTHORIZED', 'UNAUTHORIZED', 'CONSUMER_DISABLED', 'UNAUTHORIZED']);
    // An access token whose scopes do not allow the operation (docs/oauth.md); a credential from an address its
    // consumer, key or client binding is not allowed to be used from.
    expect(codes('403')).toEqual(['INSUFFICIENT_SCOPE', 'ADDRESS_NOT_ALLOWED']);
    expect(codes('413')).toEqual(['PAYLOAD_TOO_LARGE']);
    // The window refusal, the monthly quota's, the credits' (waiting for their refill), and the ban.
    expect(codes('429')).toEqual(['RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'KEY_BANNED']);
    expect(codes('402')).toEqual(['CREDITS_EXHAUSTED']);
    expect(codes('431')).toEqual(['HEADERS_TOO_LARGE']);
    for (const status of Object.keys(post.responses).filter((s) => s >= '400')) {
      for (const example of examples(status)) expect(example.status).toBe(Number(status));
    }
  });

  it('gives each operation 400 examples that operation can give: a body rule for createPet, query rules for listPets, petId for getPet', () => {
    const messages = (o: Operation) => {
      const media = response(o, '400').content!['application/json'];
      return (media.example ? [media.example] : Object.values(media.examples!).map((e) => e.value)) as Array<
        Example & { message: string }
      >;
    };
    const query = /^(limit|status|after) |query parameter/;
    const body = /^(name|categoryId) |field|JSON/;
    const createPet = messages(op('/pets', 'post'));
    expect(createPet[0]).toEqual({
      code: 'VALIDATION_FAILED',
      status: 400,
      message: expect.stringMatching(/^(name|categoryId) /),
    });
    expect(createPet.filter((e) => query.test(e.message) || e.message.includes('petId'))).toEqual([]);
    const listPets = messages(op('/pets', 'get'));
    expect(listPets[0].message).toMatch(query);
    expect(listPets.filter((e) => body.test(e.message) || e.message.includes('petId'))).toEqual([]);
    const getPet = messages(op('/pets/{petId}', 'get'));
    expect(getPet[0].message).toMatch(/^petId /);
    expect(getPet.filter((e) => query.test(e.message) || body.test(e.message))).toEqual([]);
  });

  it("gives createPet's 201 the Location of the new animal", () => {
    const headers = response(op('/pets', 'post'), '201').headers as Record<
      string,
      { required?: boolean; schema?: unknown }
    >;
    expect(headers.Location).toMatchObject({ required: true, schema: { type: 'string' } });
  });

  it('tells client generators the truth: opaque keys, required rate-limit headers, closed NewPet, plain PetStatus refs', () => {
    expect(doc.components.securitySchemes.bearer).not.toHaveProperty('bearerFormat');
    const headers = (doc.components as unknown as { headers: Record<string, { required?: boolean }> }).headers;
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
      expect(headers[name].required).toBe(true);
    expect((doc.components.schemas.NewPet as { additionalProperties?: boolean }).additionalProperties).toBe(false);
    expect(doc.components.schemas.NewPet.properties.status).toEqual({ $ref: '#/components/schemas/PetStatus' });
    expect(doc.components.schemas.Pet.properties.status).toEqual({ $ref: '#/components/schemas/PetStatus' });
  });

  it('describes the schemas with the required fields, int64 formats and our limits', () => {
    const { NewPet, Pet, Pets, PetStatus, Error } = doc.components.schemas;
    expect(NewPet.required).toEqual(['name', 'categoryId']);
    expect(NewPet.properties.categoryId).toMatchObject({ type: 'integer', format: 'int64' });
    expect(NewPet.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 100 });
    expect(Pet.required!.sort()).toEqual(['categoryId', 'id', 'name']);
    expect(Pet.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(Pets).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Pet' } });
    expect(PetStatus.enum).toEqual(['available', 'pending', 'sold']);
    expect(Error.required!.sort()).toEqual(['code', 'message', 'status']);
  });

  it('describes limit (1..100, default 20) and status as query parameters, petId as an int64 path parameter', () => {
    const parameters = op('/pets', 'get').parameters!;
    expect(parameters.find((p) => p.name === 'limit')).toMatchObject({
      in: 'query',
      required: false,
      schema: { minimum: 1, maximum: 100, default: 20 },
    });
    expect(parameters.find((p) => p.name === 'status')).toMatchObject({
      in: 'query',
      required: false,
      schema: { $ref: '#/components/schemas/PetStatus' },
    });
    expect(op('/pets/{petId}', 'get').parameters!.find((p) => p.name === 'petId')).toMatchObject({
      in: 'path',
      required: true,
      schema: { format: 'int64' },
    });
  });
});
