import { ApiError } from '@app/errors';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { Public } from './public.decorator';
import { ApiKeyGuard } from './api-key.guard';

class Routes {
  guarded(): void {}
  @Public()
  health(): void {}
}

/** The guard counts nothing: it lets through what AdmissionMiddleware admitted and @Public() routes, nothing else. */
describe('ApiKeyGuard (deny by default)', () => {
  const guard = new ApiKeyGuard(new Reflector());
  const context = (handler: keyof Routes, request: object) =>
    new ExecutionContextHost([request, {}], Routes, Routes.prototype[handler]);

  it('refuses a route the admission middleware did not admit (no consumer on the request) with 401', () => {
    let thrown: unknown;
    try {
      guard.canActivate(context('guarded', { headers: { authorization: 'Bearer anything' } }));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).getStatus()).toBe(401);
  });

  it('lets an admitted request through', () => {
    expect(guard.canActivate(context('guarded', { consumer: { name: 'acme', plan: 'pro', limits: { perMinute: 1, perDay: 1 } } }))).toBe(true);
  });

  it('lets a @Public() route through without a consumer', () => {
    expect(guard.canActivate(context('health', {}))).toBe(true);
  });
});
