/** What the tests use of oidc-provider 9 (a dev dependency without type declarations of its own). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => Promise<void>;
  }
}
