import { call, expectErrorBody, postJson, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

/** The pets service over HTTP, on PGlite or (DATABASE_URL set) on a fresh PostgreSQL database. */
describe('pets service', () => {
  const stack = withStack({ pets: {} });

  const url = (path: string) => `${stack.pets.url}${path}`;
  const create = (payload: unknown) => postJson(url('/pets'), payload);

  describe('POST /pets', () => {
    it('creates a pet and returns exactly the submitted fields plus an integer id', async () => {
      const reply = await create({ name: 'Rex', categoryId: 7, status: 'available' });
      expect(reply.status).toBe(201);
      const pet = reply.body as Record<string, unknown>;
      expect(Object.keys(pet).sort()).toEqual(['categoryId', 'id', 'name', 'status']);
      expect(Number.isSafeInteger(pet.id)).toBe(true);
      expect(pet).toMatchObject({ name: 'Rex', categoryId: 7, status: 'available' });
      // Where the new animal is (RFC 9110 §10.2.2), relative to the service's own paths.
      expect(reply.headers.get('location')).toBe(`/pets/${pet.id as number}`);
    });

    it('stores no status when none is sent: the field is absent, never null, also when read back', async () => {
      const reply = await create({ name: 'Nameless status', categoryId: 1 });
      expect(reply.status).toBe(201);
      expect(reply.body).not.toHaveProperty('status');
      expect(reply.text).not.toContain('null');
      const id = (reply.body as { id: number }).id;
      const read = await call(url(`/pets/${id}`));
      expect(read.body).toEqual({ id, name: 'Nameless status', categoryId: 1 });
    });

    it('keeps the name exactly as sent, including inner and outer spaces and non-ASCII text', async () => {
      const name = ' Bella 🐶 Ünïcode ';
      const reply = await create({ name, categoryId: 2 });
      expect(reply.status).toBe(201);
      expect((reply.body as { name: string }).name).toBe(name);
    });

    it('accepts the largest exact JSON integer as categoryId and returns it unchanged', async () => {
      const reply = await create({ name: 'Max', categoryId: Number.MAX_SAFE_INTEGER });
      expect(reply.status).toBe(201);
      expect(reply.text).toContain('"categoryId":9007199254740991');
    });

    it.each([
      ['name missing', { categoryId: 1 }, 'name is required'],
      ['categoryId missing', { name: 'Rex' }, 'categoryId is required'],
      ['name null', { name: null, categoryId: 1 }, 'name is required'],
      ['name not a string', { name: 42, categoryId: 1 }, 'name must be a string'],
      ['name empty', { name: '', categoryId: 1 }, 'name must be 1 to 100 characters long'],
      ['name blank', { name: '   ', categoryId: 1 }, 'name must not be blank or contain control characters'],
      ['name with a newline', { name: 'Re\nx', categoryId: 1 }, 'control characters'],
      ['name with NUL', { name: 'Re\u0000x', categoryId: 1 }, 'control characters'],
      ['name with a C1 control', { name: 'Re\u0085x', categoryId: 1 }, 'control characters'],
      ['name with a lone surrogate', { name: 'Re\ud800x', categoryId: 1 }, 'well-formed Unicode'],
      ['name too long', { name: 'x'.repeat(101), categoryId: 1 }, 'name must be 1 to 100 characters long'],
      [
        'categoryId as a string',
        { name: 'Rex', categoryId: '1' },
        'categoryId must be an integer from 1 to 9007199254740991',
      ],
      ['categoryId a fraction', { name: 'Rex', categoryId: 1.5 }, 'categoryId must be an integer'],
      ['categoryId boolean', { name: 'Rex', categoryId: true }, 'categoryId must be an integer'],
      ['categoryId zero', { name: 'Rex', categoryId: 0 }, 'categoryId must be an integer from 1'],
      ['categoryId negative', { name: 'Rex', categoryId: -5 }, 'categoryId must be an integer from 1'],
      ['categoryId above 2^53-1', { name: 'Rex', categoryId: 9007199254740992 }, 'categoryId must be an integer'],
      [
        'status unknown',
        { name: 'Rex', categoryId: 1, status: 'adopted' },
        'status must be one of: available, pending, sold',
      ],
      ['status null', { name: 'Rex', categoryId: 1, status: null }, 'status must not be null'],
      ['status wrong case', { name: 'Rex', categoryId: 1, status: 'Available' }, 'status must be one of'],
      [
        'an unknown field',
        { name: 'Rex', categoryId: 1, colour: 'brown' },
        'unknown field `colour`: allowed fields are name, categoryId, status',
      ],
      [
        'a typo of a field',
        { name: 'Rex', categoryID: 1 },
        'unknown field `categoryID`: allowed fields are name, categoryId, status',
      ],
      [
        'an id sent by the client',
        { id: 5, name: 'Rex', categoryId: 1 },
        'unknown field `id`: allowed fields are name, categoryId, status',
      ],
    ])('refuses %s with 400 naming the field and the rule', async (_case, payload, message) => {
      const reply = await create(payload);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toContain(message);
    });

    it('accepts a name of exactly 100 characters, counted as Unicode characters', async () => {
      const name = '🐈'.repeat(100);
      const reply = await create({ name, categoryId: 1 });
      expect(reply.status).toBe(201);
      expect((reply.body as { name: string }).name).toBe(name);
    });

    it('refuses a categoryId written with more digits than JSON numbers can hold exactly', async () => {
      const reply = await postJson(url('/pets'), '{"name":"Rex","categoryId":9007199254740993}');
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    });

    it.each([
      ['an array', '[{"name":"Rex","categoryId":1}]'],
      ['a string', '"Rex"'],
      ['null', 'null'],
    ])('refuses %s as the body with 400', async (_case, raw) => {
      expectErrorBody(await postJson(url('/pets'), raw), 400);
    });

    it.each([
      [
        '__proto__',
        '{"name":"Rex","categoryId":1,"__proto__":{"admin":true}}',
        'unknown field `__proto__`: allowed fields are name, categoryId, status',
      ],
      [
        'constructor',
        '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"admin":true}}}',
        'unknown field `constructor`: allowed fields are name, categoryId, status',
      ],
      [
        'deeply nested values',
        `{"name":"Rex","categoryId":1,"x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
        'nested too deeply',
      ],
      [
        'a deeply nested known field',
        `{"name":${'['.repeat(5000)}${']'.repeat(5000)},"categoryId":1}`,
        'nested too deeply',
      ],
    ])('refuses a body with %s with 400, never a 500', async (_case, raw, message) => {
      const reply = await postJson(url('/pets'), raw);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toContain(message);
    });

    it('refuses malformed JSON with 400 MALFORMED_JSON', async () => {
      expectErrorBody(await postJson(url('/pets'), '{"name": "Rex",'), 400, 'MALFORMED_JSON');
    });

    it('refuses a missing body with 400', async () => {
      const reply = await call(url('/pets'), { method: 'POST' });
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toContain('body is required');
    });

    it('refuses a body that is not JSON with 415', async () => {
      const reply = await call(url('/pets'), {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'Rex',
      });
      expectErrorBody(reply, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('refuses a form-encoded body with 415', async () => {
      const reply = await call(url('/pets'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Rex&categoryId=1',
      });
      expectErrorBody(reply, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('refuses a body over 16 KiB with 413 and stores nothing', async () => {
      const before = await call(url('/pets?limit=100'));
      const reply = await create({ name: 'Big', categoryId: 1, padding: 'x'.repeat(17 * 1024) });
      expectErrorBody(reply, 413, 'PAYLOAD_TOO_LARGE');
      const after = await call(url('/pets?limit=100'));
      expect(after.body).toEqual(before.body);
    });

    it('writes nothing when a request is refused', async () => {
      const before = await call(url('/pets?limit=100'));
      await create({ name: 'Ghost', categoryId: 'one' });
      await create({ name: 'Ghost', categoryId: 1, status: 'lost' });
      const after = await call(url('/pets?limit=100'));
      expect(after.body).toEqual(before.body);
    });
  });

  describe('GET /pets/:petId', () => {
    let rex: { id: number };
    beforeAll(async () => {
      rex = (await create({ name: 'Fetch me', categoryId: 3, status: 'pending' })).body as { id: number };
    });

    it('returns the pet', async () => {
      const reply = await call(url(`/pets/${rex.id}`));
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ id: rex.id, name: 'Fetch me', categoryId: 3, status: 'pending' });
    });

    it('answers 404 NOT_FOUND for a well-formed id that does not exist', async () => {
      expectErrorBody(await call(url('/pets/9007199254740991')), 404, 'NOT_FOUND');
    });

    it.each(['0', '-1', 'abc', '1.5', '1e3', '9007199254740992', '99999999999999999999999', '%20'])(
      'answers 400 for the malformed id %s',
      async (id) => {
        expectErrorBody(await call(url(`/pets/${id}`)), 400, 'VALIDATION_FAILED');
      },
    );
  });

  describe('errors outside the operations', () => {
    it('answers unknown routes with 404 and the Error body', async () => {
      expectErrorBody(await call(url('/nowhere')), 404, 'NOT_FOUND');
    });

    it('answers a wrong method with 405 and an Allow header listing the routed methods', async () => {
      const reply = await call(url('/pets'), { method: 'DELETE' });
      expectErrorBody(reply, 405, 'METHOD_NOT_ALLOWED');
      expect(reply.headers.get('allow')).toBe('GET, HEAD, POST');
      const onOne = await call(url('/pets/1'), { method: 'PUT' });
      expectErrorBody(onOne, 405, 'METHOD_NOT_ALLOWED');
      expect(onOne.headers.get('allow')).toBe('GET, HEAD');
    });
  });
});

/** Listing gets a service of its own so that its assertions see exactly the pets it created. */
describe('pets service: GET /pets', () => {
  const stack = withStack({ pets: {} });

  const url = (path: string) => `${stack.pets.url}${path}`;
  const ids = (reply: Reply) => (reply.body as Array<{ id: number }>).map((pet) => pet.id);
  const created: Array<{ id: number; status?: string }> = [];

  beforeAll(async () => {
    const statuses = ['available', 'pending', 'sold', undefined];
    for (let i = 0; i < 30; i += 1) {
      const status = statuses[i % statuses.length];
      const reply = await postJson(url('/pets'), {
        name: `Pet ${i}`,
        categoryId: 1 + (i % 3),
        ...(status ? { status } : {}),
      });
      created.push(reply.body as { id: number; status?: string });
    }
  });

  it('returns at most 20 pets when limit is absent, in ascending id order', async () => {
    const reply = await call(url('/pets'));
    expect(reply.status).toBe(200);
    expect(ids(reply)).toEqual(created.slice(0, 20).map((pet) => pet.id));
  });

  it('honours limit at both ends of 1..100', async () => {
    expect(ids(await call(url('/pets?limit=1')))).toEqual([created[0].id]);
    expect(ids(await call(url('/pets?limit=100')))).toEqual(created.map((pet) => pet.id));
  });

  it.each(['available', 'pending', 'sold'])('returns only pets with status %s', async (status) => {
    const reply = await call(url(`/pets?status=${status}&limit=100`));
    expect(reply.status).toBe(200);
    const expected = created.filter((pet) => pet.status === status).map((pet) => pet.id);
    expect(ids(reply)).toEqual(expected);
    for (const pet of reply.body as Array<{ status: string }>) expect(pet.status).toBe(status);
  });

  it('applies limit after the status filter', async () => {
    const reply = await call(url('/pets?status=sold&limit=2'));
    expect(ids(reply)).toEqual(
      created
        .filter((pet) => pet.status === 'sold')
        .slice(0, 2)
        .map((pet) => pet.id),
    );
  });

  it('lists pets without a status without a status field', async () => {
    const reply = await call(url('/pets?limit=100'));
    const withoutStatus = (reply.body as Array<Record<string, unknown>>).filter((pet) => !('status' in pet));
    expect(withoutStatus).toHaveLength(created.filter((pet) => pet.status === undefined).length);
    expect(reply.text).not.toContain('null');
  });

  it.each(['0', '101', '-1', 'abc', '1.5', '', '1e1', '+5', '20abc'])('refuses limit=%s with 400', async (limit) => {
    const reply = await call(url(`/pets?limit=${limit}`));
    expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    expect((reply.body as { message: string }).message).toContain('limit must be an integer from 1 to 100');
  });

  it('refuses a repeated limit with 400', async () => {
    expectErrorBody(await call(url('/pets?limit=1&limit=2')), 400, 'VALIDATION_FAILED');
  });

  it.each(['adopted', '', 'AVAILABLE'])('refuses status=%s with 400', async (status) => {
    const reply = await call(url(`/pets?status=${status}`));
    expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    expect((reply.body as { message: string }).message).toContain('status must be one of');
  });

  it('refuses a repeated status with 400', async () => {
    expectErrorBody(await call(url('/pets?status=sold&status=pending')), 400, 'VALIDATION_FAILED');
  });

  it('refuses an unknown query parameter with 400 rather than ignoring it', async () => {
    const reply = await call(url('/pets?limt=5'));
    expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    expect((reply.body as { message: string }).message).toContain('limt');
  });
});
