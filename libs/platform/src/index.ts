export * from './environment';
export * from './env-decorators';
export * from './http-app';
export * from './log-level';
export * from './internal-secret';
