import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Reply } from './http';

interface Operation {
  responses: Record<
    string,
    {
      headers?: Record<string, { required?: boolean; schema?: { type?: string } }>;
      content?: Record<string, { schema: object }>;
    }
  >;
}
interface Document {
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
}

/** Checks every reply to a /v1 path received so far; returns how many were checked. */
export function checkReceived(
  contract: OpenApiContract,
  replies: Array<{ method: string; url: string; reply: Reply }>,
): number {
  const failures: string[] = [];
  let count = 0;
  for (const { method, url, reply } of replies) {
    const { pathname, search } = new URL(url);
    if (!pathname.startsWith('/v1')) continue;
    try {
      contract.check(method, pathname + search, reply);
      count += 1;
    } catch (error) {
      failures.push((error as Error).message);
    }
  }
  if (failures.length > 0) throw new Error(failures.join('\n'));
  return count;
}

/**
 * Checks real responses against the served OpenAPI document with ajv: the operation exists, the status is
 * documented, the body matches the documented schema, and every documented header is present.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly prefix: string;
  checked = 0;

  private constructor(private readonly document: Document) {
    addFormats(this.ajv);
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
    });
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
    this.ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
    const first = document.servers[0]?.url ?? '';
    this.prefix = first.startsWith('/') ? first : new URL(first).pathname;
  }

  static async fetch(gatewayUrl: string): Promise<OpenApiContract> {
    const response = await fetch(`${gatewayUrl}/docs-json`);
    return new OpenApiContract((await response.json()) as Document);
  }

  /** Throws with every violation of `reply` to `method path` (path as sent, e.g. /v1/pets/12?limit=3). */
  check(method: string, path: string, reply: Reply): void {
    const problems: string[] = [];
    const bare = path.split('?')[0];
    const local = bare.startsWith(this.prefix) ? bare.slice(this.prefix.length) || '/' : undefined;
    const template = local === undefined ? undefined : this.matchTemplate(local);
    const operation = template ? this.document.paths[template][method.toLowerCase()] : undefined;
    if (!operation) {
      // Not an operation (an unknown route, a wrong method): it must still be an Error answer.
      if (reply.status !== 404 && reply.status !== 405)
        throw new Error(`${method} ${path}: no such operation, yet answered ${reply.status}`);
      const validate = this.validator({ $ref: '#/components/schemas/Error' });
      if (!validate(reply.body))
        throw new Error(`${method} ${path}: not an Error body: ${this.ajv.errorsText(validate.errors)}`);
      this.checked += 1;
      return;
    }
    const key = [String(reply.status), `${String(reply.status)[0]}XX`, 'default'].find((k) => operation.responses[k]);
    if (!key) throw new Error(`${method} ${path}: status ${reply.status} is not documented`);
    const documented = this.resolve(operation.responses[key]);

    const json = documented.content?.['application/json'];
    if (json) {
      if (!reply.headers.get('content-type')?.startsWith('application/json'))
        problems.push(`content-type is ${reply.headers.get('content-type')}`);
      const validate = this.validator(json.schema);
      if (!validate(reply.body))
        problems.push(...(validate.errors ?? []).map((e) => `body${e.instancePath} ${e.message}`));
    }
    for (const [name, reference] of Object.entries(documented.headers ?? {})) {
      const header = this.resolve(reference as { schema?: { type?: string }; required?: boolean; $ref?: string });
      const value = reply.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`header ${name} is missing`);
      } else if (header.schema?.type === 'integer' && !/^-?\d+$/.test(value))
        problems.push(`header ${name} is not an integer: ${value}`);
    }
    this.checked += 1;
    if (problems.length > 0)
      throw new Error(`${method} ${path} → ${reply.status} breaks the contract:\n  ${problems.join('\n  ')}`);
  }

  /** Follows a local `$ref` (#/components/...) to what it names. */
  private resolve<T extends object>(value: T | { $ref?: string }): T {
    const ref = (value as { $ref?: string }).$ref;
    if (!ref?.startsWith('#/')) return value as T;
    return ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], this.document) as T;
  }

  private matchTemplate(path: string): string | undefined {
    return Object.keys(this.document.paths).find((template) => {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      return pattern.test(path);
    });
  }

  private validator(schema: object): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.validators.get(key);
    if (!validate) {
      const rewritten = JSON.parse(key.replace(/"#\/components\//g, '"doc#/components/'));
      validate = this.ajv.compile(rewritten);
      this.validators.set(key, validate);
    }
    return validate;
  }
}
