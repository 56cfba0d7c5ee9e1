import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { DataSource } from 'typeorm';
import { HealthController } from './health.controller';

describe('HealthController (portal)', () => {
  const response = () => {
    const fake = { statusCode: 200, status: (code: number) => ((fake.statusCode = code), fake) };
    return fake;
  };

  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('answers {status: ok} while the database answers, asking it once for probes within a second', async () => {
    const query = jest.fn().mockResolvedValue([{ '?column?': 1 }]);
    const controller = new HealthController({ query } as unknown as DataSource);
    const first = response();
    expect(await controller.ready(first as unknown as Response)).toEqual({ status: 'ok' });
    expect(await controller.ready(response() as unknown as Response)).toEqual({ status: 'ok' });
    expect(first.statusCode).toBe(200);
    expect(query).toHaveBeenCalledTimes(1);
  });

  it('answers a JSON 503 when the database does not', async () => {
    const controller = new HealthController({
      query: jest.fn().mockRejectedValue(new Error('connection refused')),
    } as unknown as DataSource);
    const answer = response();
    expect(await controller.ready(answer as unknown as Response)).toEqual({
      status: 'error',
      error: { database: { status: 'down' } },
    });
    expect(answer.statusCode).toBe(503);
  });
});
