export * from './pets-client';
export * from './retry-policy';
export type { components, operations, paths } from './generated/openapi';
