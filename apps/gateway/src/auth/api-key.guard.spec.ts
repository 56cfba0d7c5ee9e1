import { ApiError } from '@app/errors';
import { Reflector } from '@nestjs/core';
import { executionContext } from '../nest-internals';
import { Public } from './public.decorator';
import { ApiKeyGuard } from './api-key.guard';

class Routes {
  guarded(): void {}
  @Public()
  health(): void {}
}

/** Nest's router serves no /v1 request: the guard lets @Public() routes through and refuses everything else. */
describe('ApiKeyGuard (deny by default)', () => {
  const guard = new ApiKeyGuard(new Reflector());
  const context = (handler: keyof Routes, request: object) =>
    executionContext([request, {}], Routes, Routes.prototype[handler]);

  it('refuses a route without @Public() with 401, whatever the request carries', () => {
    for (const request of [
      { headers: { authorization: 'Bearer anything' } },
      { consumer: { name: 'acme', plan: 'pro' } },
    ]) {
      let thrown: unknown;
      try {
        guard.canActivate(context('guarded', request));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).getStatus()).toBe(401);
    }
  });

  it('lets a @Public() route through', () => {
    expect(guard.canActivate(context('health', {}))).toBe(true);
  });
});
