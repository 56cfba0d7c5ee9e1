export * from './address-policy';
export * from './outbound-allow-list';
export * from './outbound-result';
export * from './resolver';
export * from './target-policy';
export * from './safe-dispatcher';
export * from './outbound-request';
export * from './standard-webhooks';
