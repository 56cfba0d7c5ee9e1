import { BadRequestException, HttpException, NotFoundException } from '@nestjs/common';
import { ApiError } from './api-error';
import { ERROR_CODES } from './error-codes';
import { toErrorResponse } from './http-error-mapping';

describe('toErrorResponse', () => {
  it('keeps an ApiError as it is, with its headers', () => {
    const error = new ApiError('RATE_LIMITED', 'slow down', { 'Retry-After': '3' });
    expect(toErrorResponse(error)).toEqual({
      body: { code: 'RATE_LIMITED', message: 'slow down', status: 429 },
      headers: { 'Retry-After': '3' },
      unexpected: false,
    });
  });

  it("puts an ApiError's details in the body, and no details key without them", () => {
    const refused = new ApiError('WEBHOOK_TARGET_REFUSED', 'url is refused (private)', {}, { reason: 'private' });
    expect(toErrorResponse(refused).body).toEqual({
      code: 'WEBHOOK_TARGET_REFUSED',
      message: 'url is refused (private)',
      status: 400,
      details: { reason: 'private' },
    });
    expect(Object.keys(toErrorResponse(new ApiError('NOT_FOUND', 'x')).body)).toEqual(['code', 'message', 'status']);
  });

  it('gives every code the status it is declared with', () => {
    for (const [code, status] of Object.entries(ERROR_CODES)) {
      expect(new ApiError(code as keyof typeof ERROR_CODES, 'x').getStatus()).toBe(status);
    }
  });

  it('maps Nest exceptions by status and keeps their message', () => {
    expect(toErrorResponse(new NotFoundException('gone fishing')).body).toEqual({
      code: 'NOT_FOUND',
      message: 'gone fishing',
      status: 404,
    });
    expect(toErrorResponse(new BadRequestException(['a is bad', 'b is bad'])).body.message).toBe('a is bad; b is bad');
  });

  it('maps body-parser failures to 400, 413 and 415', () => {
    expect(toErrorResponse({ type: 'entity.parse.failed', status: 400 }).body.code).toBe('MALFORMED_JSON');
    expect(toErrorResponse({ type: 'entity.too.large', status: 413, limit: 16384 }).body).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'The request body exceeds the limit of 16384 bytes.',
      status: 413,
    });
    expect(toErrorResponse({ type: 'charset.unsupported', status: 415, charset: 'latin1' }).body.status).toBe(415);
    expect(toErrorResponse({ type: 'encoding.unsupported', status: 415, encoding: 'br' }).body.status).toBe(415);
  });

  it('maps a body that does not match its Content-Encoding, and invalid UTF-8, to 400', () => {
    const zlibError = Object.assign(new Error('incorrect header check'), {
      status: 400,
      errno: -3,
      code: 'Z_DATA_ERROR',
    });
    expect(toErrorResponse(zlibError).body.code).toBe('MALFORMED_REQUEST');
    expect(toErrorResponse({ type: 'entity.charset.invalid', status: 400 }).body).toEqual({
      code: 'MALFORMED_JSON',
      message: 'The request body is not valid UTF-8.',
      status: 400,
    });
  });

  it('hides anything unexpected behind a generic 500 and marks it for the log', () => {
    const response = toErrorResponse(new Error('password=hunter2 at db.ts:12'));
    expect(response.body).toEqual({ code: 'INTERNAL_ERROR', message: 'An unexpected error occurred.', status: 500 });
    expect(response.unexpected).toBe(true);
    expect(toErrorResponse(new HttpException('teapot', 418)).body.status).toBe(500);
  });
});
