import { IsPlainText } from '@app/contract';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { ConsumerParams } from '../../../consumers/admin/dto/consumer-params.dto';
import type { ClientBindingEntity } from '../../client-binding.entity';

export const EXAMPLE_ISSUER = 'https://idp.acme.example/realms/machines';
export const EXAMPLE_CLIENT_ID = 'acme-billing-service';
export const EXAMPLE_BINDING_ID = '5c2d8e1a-7f3b-4a9c-b6d0-e4f1a2b3c4d5';

export class CreateClientBindingDto {
  @ApiProperty({
    example: EXAMPLE_ISSUER,
    description: "One of the gateway's configured issuers (OAUTH_ISSUERS), exactly as configured: a token's `iss`.",
  })
  @IsString({ message: 'issuer must be a string' })
  @MinLength(1, { message: 'issuer must not be empty' })
  @MaxLength(2048, { message: 'issuer must be at most 2048 characters long' })
  issuer!: string;

  @ApiProperty({
    example: EXAMPLE_CLIENT_ID,
    maxLength: 255,
    description: "The client's id at the issuer: its tokens' `client_id` claim (or `sub`, as the issuer's entry says).",
  })
  @IsString({ message: 'clientId must be a string' })
  @MinLength(1, { message: 'clientId must not be empty' })
  @MaxLength(255, { message: 'clientId must be at most 255 characters long' })
  @IsPlainText()
  clientId!: string;
}

/** The path of one binding's routes. */
export class ClientBindingParams extends ConsumerParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'bindingId must be a UUID' })
  bindingId!: string;
}

export class ClientBindingResponse {
  @ApiProperty({
    format: 'uuid',
    example: EXAMPLE_BINDING_ID,
    description: "The usage history's credential id of its tokens.",
  })
  id!: string;
  @ApiProperty({ example: EXAMPLE_ISSUER }) issuer!: string;
  @ApiProperty({ example: EXAMPLE_CLIENT_ID }) clientId!: string;
  @ApiProperty({
    type: [String],
    nullable: true,
    example: ['10.1.5.0/24'],
    description:
      "Where its tokens may be used from, within its consumer's allowedAddresses (null: anywhere they allow).",
  })
  allowedAddresses!: string[] | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}

export function toClientBindingResponse(binding: ClientBindingEntity): ClientBindingResponse {
  return {
    id: binding.id,
    issuer: binding.issuer,
    clientId: binding.clientId,
    allowedAddresses: binding.allowedAddresses,
    createdAt: binding.createdAt.toISOString(),
  };
}
