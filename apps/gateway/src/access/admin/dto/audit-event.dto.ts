import { isIP } from 'node:net';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, ValidateBy } from 'class-validator';
import { SIGN_IN_EVENTS, SignInEventKind } from '../../audit-log';

const KINDS = Object.keys(SIGN_IN_EVENTS) as SignInEventKind[];
/** The refusal of an unknown kind (the DTO's, and the route's documented example). */
export const UNKNOWN_KIND_MESSAGE = `kind must be one of ${KINDS.join(', ')}`;
/** The bound of X-On-Behalf-Of: `account:<email>` with the longest address an email may have. */
const SUBJECT_MAX = 320;

/** An IPv4 or IPv6 address, or an IPv6 /64 block (`2001:db8:1:2::/64`: how the portal counts an address). */
export function isEventAddress(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const block = /^([0-9a-f:]+)\/64$/i.exec(value);
  return block ? isIP(block[1]) === 6 : isIP(value) !== 0;
}

/** One sign-in event of a web app (POST /audit/events). */
export class RecordAuditEventDto {
  @ApiProperty({
    enum: KINDS,
    description:
      '`sign-in`: a person signed in; `sign-in-failed`: a wrong password or token, or a refused identity provider sign-in; `lockout`: an attempt refused by a sign-in throttle; `sign-out`: a person signed out; `identity-linked`, `identity-unlinked`: a signed-in person linked an identity provider to their account, or unlinked one (the portal).',
  })
  @IsIn(KINDS, { message: UNKNOWN_KIND_MESSAGE })
  kind!: SignInEventKind;

  @ApiPropertyOptional({
    maxLength: SUBJECT_MAX,
    example: 'account:dev@example.com',
    description:
      'The person: `account:<email>` (the portal: the email typed), `operator:<token name>` (the console). Absent: unknown (a refused console token).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(SUBJECT_MAX, { message: `subject must be 1-${SUBJECT_MAX} printable ASCII characters` })
  @Matches(/^[\x20-\x7e]+$/, { message: `subject must be 1-${SUBJECT_MAX} printable ASCII characters` })
  subject?: string;

  @ApiPropertyOptional({
    example: '203.0.113.7',
    description: 'Their address as the web app saw it: an IPv4 or IPv6 address, or the IPv6 /64 it counts them by.',
  })
  @IsOptional()
  @ValidateBy(
    { name: 'isEventAddress', validator: { validate: isEventAddress } },
    {
      message: 'address must be an IPv4 or IPv6 address, or an IPv6 /64 block',
    },
  )
  address?: string;

  @ApiPropertyOptional({
    example: 'PAIR_LIMIT',
    description: "Why: a failure's or a lockout's code (the web app's throttle code, the admin API's error code).",
  })
  @IsOptional()
  @Matches(/^[A-Z][A-Z0-9_]{0,63}$/, { message: 'reason must be an upper-case code (A-Z, 0-9, _), 1-64 characters' })
  reason?: string;
}
