import { ErrorDto } from '@app/contract';
import { PUBLIC_ERROR_CODE_VALUES } from '@app/errors';
import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { PlanTable } from '../plans/plans';
import { GatewayConfig } from '../config/gateway.config';
import { API_PREFIX } from '../routing/api-routes';
import { HEADER_COMPONENTS, errorResponseComponents, errorResponseRef } from '../proxy/api-responses';

function limitsTable(plans: PlanTable): string {
  const rows = Object.entries(plans).map(([plan, limits]) =>
    limits === 'custom' ? `| ${plan} | custom | custom |` : `| ${plan} | ${limits.perMinute} | ${limits.perDay} |`,
  );
  return ['| Plan | Requests per minute | Requests per day |', '|---|---|---|', ...rows].join('\n');
}

function description(config: GatewayConfig, plans: PlanTable): string {
  const banSeconds = config.rateLimit.banDurationMs / 1000;
  return [
    'The animals interface of the pet adoption store.',
    '',
    '**Authentication**: every operation needs `Authorization: Bearer <API key>`; a missing or invalid key gets 401.',
    '',
    '**Rate limits** per plan, counted per consumer (the account an API key belongs to: every key of one consumer shares its windows, so a second key starts where the first one is) across all operations and all gateway instances:',
    '',
    limitsTable(plans),
    '',
    'Every response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix seconds) for the window closest to running out, and `RateLimit-Policy` / `RateLimit` for every window.',
    "Every request under `/v1` is counted exactly once, whatever its form (any case, a trailing slash, `HEAD`, with or without `Origin`), and so is every answer: 404 for an unknown path, 405 `METHOD_NOT_ALLOWED` (with `Allow`) for a method a path does not support and 400 for a path that cannot be percent-decoded are counted and carry these headers (the consumer's with a valid key; without one the answer is 401, on the anonymous limit). A CORS preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) carries no credentials: it is answered at once and counts nothing. Only answers of the HTTP parser itself (408, 431, broken framing) carry none.",
    `Over a limit: 429 \`RATE_LIMITED\` with \`Retry-After\` (seconds). Requests refused with 429 do not count against the quota. A key that sends more than ${config.rateLimit.banThreshold} further requests within the window after its 429 is banned for ${banSeconds} seconds (429 \`KEY_BANNED\`, \`Retry-After\` until the ban ends). Wait for \`Retry-After\` and back off exponentially.`,
    `Requests without a valid key are limited to ${config.rateLimit.anonymousPerMinute} per minute per client address.`,
    '',
    `**Errors** all carry the Error body \`{code, message, status}\`; codes: ${PUBLIC_ERROR_CODE_VALUES.map((c) => `\`${c}\``).join(', ')}.`,
    '',
    '**Stability**: each operation carries `x-stability` (`stable`, `beta`, `experimental` or `deprecated`).',
  ].join('\n');
}

/**
 * The OpenAPI document, generated from the controllers and the shared DTO classes. `served` adds a relative
 * `/v1` server first, so that Swagger UI's "Try it out" calls the gateway that serves it.
 */
export function buildOpenApiDocument(
  app: INestApplication,
  config: GatewayConfig,
  plans: PlanTable,
  served: boolean,
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Pet adoption store: animals API')
    .setDescription(description(config, plans))
    .setVersion('1.0.0')
    .setLicense('Proprietary', 'https://petstore.example.com/terms')
    .addTag('animals', 'The animals (pets) of the store.')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'API key, sent as `Authorization: Bearer <API key>`.' },
      'bearer',
    );
  if (served) builder.addServer(API_PREFIX, 'This gateway');
  builder.addServer(config.publicUrls.production, 'Production').addServer(config.publicUrls.staging, 'Staging');

  const document = SwaggerModule.createDocument(app, builder.build(), {
    ignoreGlobalPrefix: true,
    extraModels: [ErrorDto],
  });
  document.components ??= {};
  document.components.schemas ??= {};
  document.components.schemas.Pets = {
    type: 'array',
    description: 'A list of animals.',
    items: { $ref: '#/components/schemas/Pet' },
  };
  tellGeneratorsTheTruth(document);
  declareOAuthIssuers(document, config);
  return document;
}

/**
 * Each configured issuer with a `tokenUrl` (docs/oauth.md) as an OAuth 2.0 client-credentials scheme beside the
 * bearer key, and every operation taking either: Swagger UI can then fetch a token from the issuer and send it. The
 * exported gateway/openapi.json is built without issuers, so it declares the key alone (its OAuth schemes are the
 * deployment's, not the API's).
 */
function declareOAuthIssuers(document: OpenAPIObject, config: GatewayConfig): void {
  const issuers = config.oauth.issuers.filter((issuer) => issuer.tokenUrl !== undefined);
  if (issuers.length === 0) return;
  const names = issuers.map((_, i) => (i === 0 ? 'oauth2' : `oauth2_${i + 1}`));
  const schemes = (document.components!.securitySchemes ??= {});
  issuers.forEach((issuer, i) => {
    schemes[names[i]] = {
      type: 'oauth2',
      description: `An access token of ${issuer.issuer} for audience \`${issuer.audience}\`, by the client-credentials grant, sent as \`Authorization: Bearer <token>\`: its client must be bound to a consumer (docs/oauth.md).`,
      flows: {
        clientCredentials: {
          tokenUrl: issuer.tokenUrl!,
          scopes: Object.fromEntries(
            [...(issuer.scopes ?? new Map<string, readonly string[]>())].map(([scope, operations]) => [
              scope,
              `Allows ${operations.join(', ')}`,
            ]),
          ),
        },
      },
    };
  });
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as Array<{ security?: Array<Record<string, string[]>> }>)
      if (operation.security?.some((requirement) => 'bearer' in requirement))
        // A new list each: the decorators' lists are shared between the controller's operations.
        operation.security = [...operation.security, ...names.map((name) => ({ [name]: [] }))];
}

/**
 * What @nestjs/swagger cannot say through decorators, written once here:
 * - error responses and response headers are shared components, referenced from every operation;
 * - the bearer scheme names no format: keys are opaque, not JWTs (addBearerAuth defaults to "JWT");
 * - NewPet refuses unknown fields (additionalProperties: false), as the service does;
 * - a property whose schema is a single $ref (status → PetStatus) is that $ref, not an allOf wrapper that
 *   generators turn into an anonymous type.
 */
function tellGeneratorsTheTruth(document: OpenAPIObject): void {
  const components = (document.components ??= {});
  components.headers = { ...HEADER_COMPONENTS };
  components.responses = errorResponseComponents();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as Array<{
      operationId?: string;
      responses?: Record<string, unknown>;
    }>) {
      for (const status of Object.keys(operation.responses ?? {})) {
        const shared = errorResponseRef(Number(status), operation.operationId);
        if (shared) operation.responses![status] = shared;
      }
    }
  }
  const bearer = components.securitySchemes?.bearer as { bearerFormat?: string } | undefined;
  if (bearer) delete bearer.bearerFormat;
  const schemas = (components.schemas ?? {}) as Record<
    string,
    { properties?: Record<string, Record<string, unknown>>; additionalProperties?: boolean }
  >;
  if (schemas.NewPet) schemas.NewPet.additionalProperties = false;
  if (schemas.PetStatus) {
    (schemas.PetStatus as { description?: string }).description =
      'Availability status of an animal. Optional in a NewPet (none is assumed when omitted); absent from a Pet that has none.';
  }
  for (const schema of Object.values(schemas)) {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const allOf = property.allOf as Array<{ $ref?: string }> | undefined;
      if (allOf?.length === 1 && allOf[0].$ref) schema.properties![name] = { $ref: allOf[0].$ref };
    }
  }
}
