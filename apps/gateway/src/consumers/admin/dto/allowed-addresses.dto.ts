import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';
import { ALLOWED_ADDRESSES_RULE, MAX_ALLOWED_ADDRESSES, normalizedAddressList } from '../../allowed-addresses';

/** An allowedAddresses field: null (anywhere) or 1 to 100 addresses or CIDR ranges, one message for every fault. */
export const IsAllowedAddresses = (): PropertyDecorator =>
  ValidateBy({
    name: 'isAllowedAddresses',
    validator: {
      validate: (value: unknown) => normalizedAddressList(value) !== undefined,
      defaultMessage: () => ALLOWED_ADDRESSES_RULE,
    },
  });

export const ALLOWED_ADDRESSES_PROPERTY: { type: [StringConstructor] } & ApiPropertyOptions = {
  type: [String],
  nullable: true,
  minItems: 1,
  maxItems: MAX_ALLOWED_ADDRESSES,
  example: ['10.1.0.0/16', '2001:db8::/32'],
};

/** The body of a key's or a client binding's update: where it may be used from. */
export class UpdateCredentialDto {
  @ApiProperty({
    ...ALLOWED_ADDRESSES_PROPERTY,
    description:
      "The IPv4 and IPv6 addresses and CIDR ranges its requests may come from (as the rate limits judge the client address: TRUST_PROXY), stored on their network address (an IPv4-mapped IPv6 range as the IPv4 range it means); null: anywhere. Its consumer's own allowedAddresses apply as well: a request must come from inside both.",
  })
  // Required (null to lift it): a body that forgot the field must not lift a restriction.
  @IsAllowedAddresses()
  allowedAddresses!: string[] | null;
}
