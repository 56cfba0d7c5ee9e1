import { GET_PET_DEPRECATION, ListPetsQueryDto, NewPetDto, PetDto, PetIdParamsDto } from '@app/contract';
import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiExtension,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { ApiExchange, Exchange } from '../routing/api-exchange';
import { API_PREFIX, PETS_PATH } from '../routing/api-routes';
import { ApiErrorResponses, COMMON_RESPONSE_HEADERS, DEPRECATION_HEADERS } from './api-responses';
import { NEXT_LINK_HEADER } from './next-link';
import { CREATED_LOCATION_HEADER } from './public-location';
import { Sunset } from '../routing/sunset';
import { WritesExchangeHeaders } from '../routing/exchange-headers';
import { UpstreamService, requestTarget } from './upstream.service';

const removal = GET_PET_DEPRECATION.sunset.toISOString().slice(0, 10);

/**
 * The public pets operations: the source of the /v1 routes and of their OpenAPI description. The pipeline
 * (apps/gateway/src/pipeline) serves every request for them, authenticated and counted, and calls these
 * handlers with the request's ApiExchange. Validation happens once, in the pets service (the same DTO classes,
 * which here only describe the contract): the gateway forwards the bytes.
 */
@ApiTags('animals')
@ApiBearerAuth('bearer')
@ApiExtraModels(PetDto)
@Controller(PETS_PATH)
@WritesExchangeHeaders()
export class PetsProxyController {
  constructor(private readonly upstream: UpstreamService) {}

  @Get()
  @ApiOperation({
    operationId: 'listPets',
    summary: 'List all animals',
    description:
      'At most `limit` animals (default 20), in ascending id order, optionally only those with a given `status`. ' +
      'When more follow, the response carries `Link: <...>; rel="next"` (RFC 8288): follow it, page after page, ' +
      'to read every animal; the last page has none. Paging is by id, so animals added meanwhile are neither ' +
      'skipped nor repeated, and a page deep in the list costs what the first one costs.',
  })
  @ApiExtension('x-stability', 'stable')
  @ApiOkResponse({
    description: 'A page of animals.',
    schema: { $ref: '#/components/schemas/Pets' },
    headers: { ...COMMON_RESPONSE_HEADERS, ...NEXT_LINK_HEADER },
  })
  @ApiErrorResponses()
  listPets(@Query() _query: ListPetsQueryDto, @Exchange() exchange: ApiExchange): Promise<void> {
    return this.forward(exchange);
  }

  @Post()
  @ApiOperation({
    operationId: 'createPet',
    summary: 'Add an animal',
    description: 'The returned Pet repeats the submitted fields and adds the assigned `id`.',
  })
  @ApiExtension('x-stability', 'stable')
  @ApiBody({ type: NewPetDto, required: true })
  @ApiCreatedResponse({
    description: 'Animal added; the body carries the assigned `id`, and `Location` where to read it back.',
    schema: { $ref: getSchemaPath(PetDto) },
    headers: { ...COMMON_RESPONSE_HEADERS, ...CREATED_LOCATION_HEADER },
  })
  @ApiErrorResponses(413, 415)
  createPet(@Exchange() exchange: ApiExchange): Promise<void> {
    return this.forward(exchange);
  }

  @Get(':petId')
  @Sunset({ ...GET_PET_DEPRECATION, successor: `${API_PREFIX}/pets` })
  @ApiOperation({
    operationId: 'getPet',
    summary: 'Get an animal (deprecated)',
    description:
      `**Deprecated**: removed on ${removal} (5 December 2030); from then on it answers 410 Gone. ` +
      `Use instead: ${GET_PET_DEPRECATION.replacement} (\`GET /pets?status=...\`). ` +
      'Responses carry `Deprecation`, `Sunset` and `Link` headers.',
    deprecated: true,
  })
  @ApiExtension('x-stability', 'deprecated')
  @ApiOkResponse({
    description: 'The requested animal.',
    schema: { $ref: getSchemaPath(PetDto) },
    headers: { ...COMMON_RESPONSE_HEADERS, ...DEPRECATION_HEADERS },
  })
  @ApiErrorResponses(404, 410)
  getPet(@Param() _params: PetIdParamsDto, @Exchange() exchange: ApiExchange): Promise<void> {
    return this.forward(exchange);
  }

  private forward(exchange: ApiExchange): Promise<void> {
    return this.upstream.forward(exchange, requestTarget(exchange.request.originalUrl).slice(API_PREFIX.length));
  }
}
