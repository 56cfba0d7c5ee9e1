import { SetMetadata } from '@nestjs/common';

export const PUBLIC_PAGE = 'console:public-page';

/** A page anyone may open (sign-in). Every other page needs a signed-in operator (deny by default). */
export const PublicPage = (): MethodDecorator => SetMetadata(PUBLIC_PAGE, true);
