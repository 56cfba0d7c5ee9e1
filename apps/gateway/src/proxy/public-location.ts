import type { HeadersObject } from '@nestjs/swagger';
import { API_PREFIX, PETS_PATH } from '../routing/api-routes';

/** The `Location` of createPet's 201, as documented in the OpenAPI document. */
export const CREATED_LOCATION_HEADER: HeadersObject = {
  Location: {
    description: 'Where the new animal is: `/v1/pets/{id}` (relative to the origin the request was sent to).',
    required: true,
    schema: { type: 'string', example: '/v1/pets/42' },
  },
};

const CREATED_PET = new RegExp(`^/${PETS_PATH}/[1-9][0-9]{0,15}$`);

/**
 * The pets service says where a created animal is relative to its own paths (`/pets/42`); the client gets the
 * public path (`/v1/pets/42`). Anything else the service might send (an internal address) stays behind.
 */
export function publicLocation(upstream: string | string[] | undefined): string | undefined {
  return typeof upstream === 'string' && CREATED_PET.test(upstream) ? `${API_PREFIX}${upstream}` : undefined;
}
