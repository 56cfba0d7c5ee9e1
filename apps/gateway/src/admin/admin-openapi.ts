import { ErrorDto } from '@app/contract';
import { ERROR_CODE_VALUES, ERROR_CODES } from '@app/errors';
import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { ANY_SCOPE, NO_TOKEN } from '../access/admin-operation.decorator';
import { ADMIN_POLICY } from '../access/admin-policy';
import { ADMIN_TAG, TOKENS_TAG } from '../admin-conventions/admin-tags';
import {
  BODY_STATUSES,
  EVERY_OPERATION_STATUSES,
  notFound,
  sharedErrorRef,
  sharedErrorResponses,
} from '../admin-conventions/admin-responses';
import { WEBHOOK_PAYLOAD_MODELS, webhooksSection } from '../webhooks/admin/webhook-openapi';
import { TARGET_REFUSAL_REASONS } from '../webhooks/webhook-target';

/** The admin API's version: semantic, date-free; bumped with its contract. */
export const ADMIN_API_VERSION = '1.0.0';
/** Where the admin API listens by default (ADMIN_HOST, ADMIN_PORT). */
export const ADMIN_DEFAULT_URL = 'http://127.0.0.1:3002';

/**
 * The admin API's OpenAPI document, built from its controller and DTOs. `served` (Swagger UI on the admin port)
 * lists a relative `/` server first, so that "Try it out" calls the admin API that serves it; the exported file
 * (gateway/admin-openapi.json) lists the default address only.
 */
export function buildAdminOpenApiDocument(app: INestApplication, served: boolean): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Pet adoption store: gateway admin API')
    .setDescription(
      'Consumers and API keys of the gateway (the control plane). Bound to loopback by default and never routed by the ' +
        'load balancer: every route needs `Authorization: Bearer <token>`, ADMIN_TOKEN (root: every scope) or an admin ' +
        'token (`adm_…`) holding the scope the route names (`x-required-scope`; otherwise 403 `FORBIDDEN`). ' +
        'Errors use the `{code, message, status}` body. ' +
        'A web app calling for a person names them with `X-On-Behalf-Of` (`account:<id> <email>`, `operator:<name>`) and ' +
        '`X-End-User-Address` (an IP address), recorded in the audit log: only root and tokens created with ' +
        '`actsForUsers` may send them (otherwise 403 `FORBIDDEN`; a value that is not printable ASCII up to 320 ' +
        'characters, or not an address, 400 `VALIDATION_FAILED`). ' +
        'The keys CLI (`npm run -s keys -- ...`) is a client of this API.',
    )
    .setVersion(ADMIN_API_VERSION)
    .setLicense('Proprietary', 'https://petstore.example.com/terms')
    .addTag(
      ADMIN_TAG,
      'Consumers (unique name, plan, optional limits of their own) and their API keys: issue, rotate, revoke, disable, usage, import and export.',
    )
    .addTag(
      TOKENS_TAG,
      'Scoped admin tokens (created, listed, revoked; each shown once) and the audit log of every change and refusal.',
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description:
          "ADMIN_TOKEN (root; in development, the file ADMIN_TOKEN_FILE) or an admin token (adm_…) with the route's scope.",
      },
      'bearer',
    );
  if (served) builder.addServer('/', 'This admin API');
  builder.addServer(ADMIN_DEFAULT_URL, "The default address (ADMIN_HOST:ADMIN_PORT), on the gateway's host");
  const document = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ErrorDto, ...WEBHOOK_PAYLOAD_MODELS],
  });
  // The webhooks the gateway sends: OpenAPI 3.1's `webhooks`, in this 3.0 document the `x-webhooks` extension.
  (document as OpenAPIObject & { 'x-webhooks'?: unknown })['x-webhooks'] = webhooksSection();
  tellGeneratorsTheTruth(document);
  describeScopes(document);
  assertEveryRouteInThePolicy(document);
  return document;
}

type Operation = { operationId?: string; requestBody?: unknown; responses: Record<string, unknown> };
const BODY_METHODS = new Set(['post', 'put', 'patch']);

/**
 * What the decorators cannot say, written once here:
 * - the errors every operation can give (401, 500, 503; 413 and 415 where a body is taken) are shared
 *   components.responses, referenced from every operation (one that documents its own 503 keeps it);
 * - the Error schema's example message is one of this API's;
 * - the bearer scheme names no format: the token is opaque, not a JWT (addBearerAuth defaults to "JWT");
 * - a nullable object property (`limits: null`) is the object's schema with `nullable: true` beside its `type`,
 *   which OpenAPI 3.0 reads as "or null". @nestjs/swagger writes `{nullable: true, allOf: [{$ref}]}`, which
 *   validators (Prism, ajv) read as "must match the $ref", and null never does.
 */
function tellGeneratorsTheTruth(document: OpenAPIObject): void {
  const components = (document.components ??= {});
  components.responses = { ...components.responses, ...sharedErrorResponses() };
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(item) as Array<[string, Operation]>) {
      const statuses = [...EVERY_OPERATION_STATUSES, ...(BODY_METHODS.has(method) ? BODY_STATUSES : [])];
      for (const status of statuses) operation.responses[status] ??= sharedErrorRef(status);
      operation.responses = Object.fromEntries(
        Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b)),
      );
    }
  }
  const bearer = components.securitySchemes?.bearer as { bearerFormat?: string } | undefined;
  if (bearer) delete bearer.bearerFormat;
  const schemas = (components.schemas ?? {}) as Record<string, SchemaObject>;
  // The shared Error schema's example message is the public API's (a `limit` rule): this API's is a 404.
  const errorMessage = schemas.Error?.properties?.message as SchemaObject | undefined;
  if (errorMessage) errorMessage.example = notFound()[0];
  // The shared Error schema lists the public codes; this API also sends the admin-only ones (FORBIDDEN, the 409s).
  const errorCode = schemas.Error?.properties?.code as SchemaObject | undefined;
  if (errorCode) {
    errorCode.enum = [...ERROR_CODE_VALUES];
    errorCode.description = `Machine-readable error code, one of: ${ERROR_CODE_VALUES.map((code) => `\`${code}\` (${ERROR_CODES[code]})`).join(', ')}.`;
  }
  // Only this API's WEBHOOK_TARGET_REFUSED carries details: the refused URL's class, which a page names.
  if (schemas.Error?.properties)
    schemas.Error.properties.details = {
      type: 'object',
      description:
        'Machine-readable facts about the error, only on the codes that have some: `WEBHOOK_TARGET_REFUSED` names why the outbound policy refused the URL in `reason`.',
      properties: { reason: { type: 'string', enum: [...TARGET_REFUSAL_REASONS], example: 'metadata' } },
      required: ['reason'],
    };
  for (const schema of Object.values(schemas)) {
    for (const [name, property] of Object.entries(schema.properties ?? {}) as Array<
      [string, SchemaObject & { allOf?: Array<{ $ref?: string }> }]
    >) {
      const target = property.allOf?.length === 1 ? property.allOf[0].$ref : undefined;
      if (!property.nullable || !target) continue;
      const referenced = schemas[target.slice('#/components/schemas/'.length)];
      if (!referenced?.type) continue;
      const { allOf: _allOf, ...rest } = property;
      schema.properties![name] = { ...referenced, ...rest, nullable: true };
    }
  }
}

type Described = Record<string, unknown> & { description?: string; operationId?: string };

/** Each operation's description says which scopes it needs and what a restricted token reaches (its policy entry). */
function describeScopes(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete'] as const) {
      const operation = item[method] as Described | undefined;
      if (!operation) continue;
      const scopes = (operation['x-required-scopes'] as string[] | undefined) ?? [operation['x-required-scope']];
      const restriction = operation['x-object-restriction'] as { restricted: string } | undefined;
      const line =
        scopes[0] === ANY_SCOPE
          ? 'Any valid token (no scope needed), ADMIN_TOKEN included.'
          : scopes[0] === NO_TOKEN
            ? 'No admin token: the body carries the credential.'
            : typeof scopes[0] === 'string'
              ? `Required scope: ${scopes.map((scope) => `\`${String(scope)}\``).join(' and ')} (or ADMIN_TOKEN).`
              : 'No entry in the admin policy: refused to every token.';
      const restricted = restriction ? ` A restricted token (ownConsumersOnly, plans): ${restriction.restricted}.` : '';
      // No admin token (a person's sign-in): the document says so, the route's own credential is in its body.
      if (scopes[0] === NO_TOKEN) operation.security = [];
      operation.description = `${operation.description ? `${operation.description}\n\n` : ''}${line}${restricted}`;
    }
  }
}

/**
 * The start-up check of the admin policy (access/admin-policy.ts): every route is in it (through @AdminOperation)
 * and every entry is a route. A new route that forgets its entry stops the gateway here, before it serves anyone.
 */
function assertEveryRouteInThePolicy(document: OpenAPIObject): void {
  const operations = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete'] as const) {
      const operation = item[method] as Described | undefined;
      if (!operation) continue;
      if (!operation.operationId || !operation['x-object-restriction'])
        throw new Error(`Admin route ${method.toUpperCase()} ${path} has no @AdminOperation entry in ADMIN_POLICY.`);
      operations.add(operation.operationId);
    }
  }
  const orphans = Object.keys(ADMIN_POLICY).filter((id) => !operations.has(id));
  if (orphans.length > 0) throw new Error(`ADMIN_POLICY names operations no admin route has: ${orphans.join(', ')}.`);
}
