import { ERROR_CODES, PUBLIC_ERROR_CODE_VALUES } from '@app/errors';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';

const codeTable = PUBLIC_ERROR_CODE_VALUES.map((code) => `\`${code}\` (${ERROR_CODES[code]})`).join(', ');

/** The Error body (spec 2.5), sent with every non-2xx response. */
@ApiSchema({ name: 'Error', description: 'Sent with every error response; `status` equals the HTTP status.' })
export class ErrorDto {
  @ApiProperty({
    description: `Machine-readable error code, one of: ${codeTable}.`,
    enum: PUBLIC_ERROR_CODE_VALUES,
    example: 'VALIDATION_FAILED',
  })
  code!: string;

  @ApiProperty({
    description: 'Human-readable description of the error.',
    example: 'limit must be an integer from 1 to 100',
  })
  message!: string;

  @ApiProperty({ type: 'integer', format: 'int32', description: 'The HTTP status code of the response.', example: 400 })
  status!: number;
}
