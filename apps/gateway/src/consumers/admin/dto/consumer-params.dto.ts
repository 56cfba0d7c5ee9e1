import { ApiProperty } from '@nestjs/swagger';
import { IsString, IsUUID } from 'class-validator';
import { CONSUMER_NAME_PATTERN, IsConsumerName } from '../../consumer-name';

/**
 * The path of a consumer's routes: a name as names are made (so that a NUL byte, a slash or text that cannot be a
 * name is a 400, never sent to the database).
 */
export class ConsumerParams {
  @ApiProperty({ pattern: CONSUMER_NAME_PATTERN.source, example: 'acme' })
  @IsString()
  @IsConsumerName()
  name!: string;
}

/** The path of one key's routes. */
export class ConsumerKeyParams extends ConsumerParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'keyId must be a UUID' })
  keyId!: string;
}
