import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'gateway:isPublic';

/** Opts a route out of authentication and rate limiting (health). Everything else is denied by default. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
