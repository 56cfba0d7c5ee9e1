import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { adminContextOf, AdminRequest } from './admin-request';

/**
 * The admin call's context (actor, request id, source), for the controller to hand to the repository: explicit,
 * so that every repository method that checks or audits is given its actor (see AdminRequestContext).
 */
export const AdminCall = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  adminContextOf(context.switchToHttp().getRequest<AdminRequest>()),
);
