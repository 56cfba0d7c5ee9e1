import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength, ValidateBy } from 'class-validator';
import { isEventAddress } from '../../../access/admin/dto/audit-event.dto';

/** A compact JWS: three base64url segments (an ID token); anything else is refused before any key is fetched. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** POST /sessions/oidc: the person's ID token, as the console received it from the provider's token endpoint. */
export class CreatePersonSessionDto {
  @ApiProperty({
    description:
      "The person's ID token (a JWT the operators' identity provider signed for the console's client id, at most 5 minutes old): taken once.",
    example: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJvbGl2aWEifQ.c2ln',
  })
  @IsString()
  @MaxLength(16_384, { message: 'idToken must be a JWT of at most 16384 characters' })
  @Matches(COMPACT_JWS, { message: 'idToken must be a JWT (three base64url segments)' })
  idToken!: string;

  @ApiPropertyOptional({ example: '203.0.113.7', description: "The person's address as the console saw it." })
  @IsOptional()
  @ValidateBy(
    { name: 'isEventAddress', validator: { validate: isEventAddress } },
    { message: 'address must be an IPv4 or IPv6 address, or an IPv6 /64 block' },
  )
  address?: string;
}

/** A person's session credential: shown once, to the console that exchanged the ID token. */
export class PersonSessionResponse {
  @ApiProperty({ description: 'The admin token (`adm_…`) the console acts with for the person: shown only here.' })
  token!: string;

  @ApiProperty({ format: 'uuid', description: "The token's id." })
  id!: string;

  @ApiProperty({ example: 'sso:olivia.ops@example.com', description: "The token's name: `sso:` and the email." })
  name!: string;

  @ApiProperty({
    example: 'olivia.ops@example.com (olivia at https://idp.example.com)',
    description: 'Who signed in (email, subject, issuer): every audit row of the session names them.',
  })
  person!: string;

  @ApiProperty({ example: 'olivia.ops@example.com' })
  email!: string;

  @ApiProperty({ type: [String], example: ['consumers:read', 'usage:read'], description: 'From the mapped roles.' })
  scopes!: string[];

  @ApiProperty({ type: [String], nullable: true, description: 'Only consumers on these plans; null: every plan.' })
  plans!: string[] | null;

  @ApiProperty({
    format: 'date-time',
    description: 'When it stops working (ADMIN_OIDC_SESSION_MINUTES): sign in again.',
  })
  expiresAt!: string;
}
