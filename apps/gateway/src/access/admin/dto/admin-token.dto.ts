import { IsDateTime, OptionalButNotNull } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
} from 'class-validator';
import { ADMIN_SCOPES, AdminScope } from '../../admin-scopes';
import { AdminTokenEntity } from '../../admin-token.entity';
import { PLAN_NAMES } from '../../../plans/plans';

export class CreateAdminTokenDto {
  @ApiProperty({ example: 'portal', maxLength: 64, description: 'What the token is for (shown in the audit log).' })
  @IsString()
  @MaxLength(64)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'name must be letters, digits, dots, dashes and underscores' })
  name!: string;

  @ApiProperty({ enum: ADMIN_SCOPES, isArray: true, example: ['consumers:read'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(ADMIN_SCOPES, { each: true, message: `each scope must be one of ${ADMIN_SCOPES.join(', ')}` })
  scopes!: AdminScope[];

  @ApiPropertyOptional({ format: 'date-time', description: 'When the token stops working (none: never).' })
  @OptionalButNotNull()
  @IsDateTime()
  expiresAt?: string;

  @ApiPropertyOptional({
    default: false,
    description: 'Only the consumers this token creates (lists, reads, changes, keys, usage).',
  })
  @IsOptional()
  @IsBoolean()
  ownConsumersOnly?: boolean;

  @ApiPropertyOptional({
    enum: PLAN_NAMES,
    isArray: true,
    description: 'Only consumers on these plans (created, changed to, or touched).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(PLAN_NAMES, { each: true, message: `each plan must be one of ${PLAN_NAMES.join(', ')}` })
  plans?: string[];

  @ApiPropertyOptional({
    default: false,
    description:
      "May name the end user behind its calls (headers X-On-Behalf-Of, X-End-User-Address), recorded in the audit log: the portal's and the console's token. Only root may grant it.",
  })
  @IsOptional()
  @IsBoolean()
  actsForUsers?: boolean;
}

export class AdminTokenParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'id must be a UUID' })
  id!: string;
}

export class AdminTokenResponse {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({
    description: 'The first characters of the token: enough to recognise it, not to use it.',
    example: 'adm_Ab3d…',
  })
  hint!: string;
  @ApiProperty({ enum: ADMIN_SCOPES, isArray: true }) scopes!: string[];
  @ApiProperty() ownConsumersOnly!: boolean;
  @ApiProperty({ type: [String], nullable: true }) plans!: string[] | null;
  @ApiProperty({ description: 'May name the end user behind its calls (X-On-Behalf-Of).' }) actsForUsers!: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty() createdBy!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expiresAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'Updated at most once a minute.' })
  lastUsedAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revokedAt!: string | null;
}

export class CreatedAdminTokenResponse {
  @ApiProperty({ description: 'The token: shown only here, never stored (only its SHA-256 is).', example: 'adm_…' })
  token!: string;
  @ApiProperty({ type: AdminTokenResponse }) record!: AdminTokenResponse;
}

export function toAdminTokenResponse(t: AdminTokenEntity): AdminTokenResponse {
  return {
    id: t.id,
    name: t.name,
    hint: t.hint,
    scopes: t.scopes,
    ownConsumersOnly: t.ownConsumersOnly,
    plans: t.plans,
    actsForUsers: t.actsForUsers,
    createdAt: t.createdAt.toISOString(),
    createdBy: t.createdBy,
    expiresAt: t.expiresAt?.toISOString() ?? null,
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  };
}

/** GET /token: the calling token's own record, what a console needs to know what to show (issue #26). */
export class CurrentTokenResponse {
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'null for the root token (ADMIN_TOKEN).' })
  id!: string | null;
  @ApiProperty({ example: 'oncall', description: '"root" for ADMIN_TOKEN.' }) name!: string;
  @ApiProperty({ enum: ADMIN_SCOPES, isArray: true, description: 'Root holds every scope.' }) scopes!: string[];
  @ApiProperty() ownConsumersOnly!: boolean;
  @ApiProperty({ type: [String], nullable: true }) plans!: string[] | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expiresAt!: string | null;
  @ApiProperty({ description: 'May name the end user behind its calls (X-On-Behalf-Of); true for root.' })
  actsForUsers!: boolean;
}
