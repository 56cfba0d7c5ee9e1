import { DataSource } from 'typeorm';
import { expectErrorBody, call, postJson } from '../../support/http';
import { withStack } from '../../support/with-stack';

/** A failure the client did not cause becomes a generic 500: details go to the log, never to the client. */
describe('unexpected errors', () => {
  const stack = withStack({ pets: {} });

  beforeAll(async () => {
    // Take the database away from under the running service.
    await stack.pets.app.get(DataSource).destroy();
  });

  it.each([
    ['a list', () => call(`${stack.pets.url}/pets`)],
    ['a creation', () => postJson(`${stack.pets.url}/pets`, { name: 'Rex', categoryId: 1 })],
    ['a read', () => call(`${stack.pets.url}/pets/1`)],
  ])('answers %s with 500 INTERNAL_ERROR and a generic message', async (_case, request) => {
    const reply = await request();
    expectErrorBody(reply, 500, 'INTERNAL_ERROR');
    expect((reply.body as { message: string }).message).toBe('An unexpected error occurred.');
    expect(reply.text).not.toMatch(/DataSource|typeorm|at .+\.(js|ts)|Error:/);
  });

  it('still validates input first: a bad request is a 400, not a 500', async () => {
    expectErrorBody(await call(`${stack.pets.url}/pets?limit=0`), 400, 'VALIDATION_FAILED');
  });

  it('reports itself not ready', async () => {
    expect((await call(`${stack.pets.url}/health/ready`)).status).toBe(503);
  });
});
