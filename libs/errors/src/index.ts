export * from './error-codes';
export * from './api-error';
export * from './http-error-mapping';
export * from './all-exceptions.filter';
export * from './json-body';
export * from './write-error';
export * from './allowed-methods';
export * from './request-body';
