import { ApiError } from '@app/errors';
import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

export interface SunsetPolicy {
  deprecatedSince: Date;
  sunset: Date;
  /** Where clients should go instead (a Link with rel="successor-version"). */
  successor: string;
  /** Human-readable replacement, for the 410 message. */
  replacement: string;
}

const SUNSET = 'gateway:sunset';

/**
 * Marks an operation deprecated on the wire until `sunset`, and gone (410) from then on: Deprecation (RFC 9745,
 * a structured date: `@<unix seconds>`), Sunset (RFC 8594, an HTTP date) and Link headers on every answer of it
 * (the pipeline applies them), and 410 Gone with the Error body once the sunset has passed.
 */
export const Sunset = (policy: SunsetPolicy): MethodDecorator => SetMetadata(SUNSET, policy);

/** The policy `@Sunset` put on a handler, if any. */
export function sunsetPolicyOf(reflector: Reflector, handler: object): SunsetPolicy | undefined {
  return reflector.get<SunsetPolicy | undefined>(SUNSET, handler as never);
}

/** Sets the deprecation headers of `policy` on the response; throws the 410 once the sunset has passed. */
export function applySunset(
  policy: SunsetPolicy,
  response: { setHeader(name: string, value: string): unknown },
  now: number,
): void {
  response.setHeader('Deprecation', `@${Math.floor(policy.deprecatedSince.getTime() / 1000)}`);
  response.setHeader('Sunset', policy.sunset.toUTCString());
  response.setHeader('Link', `<${policy.successor}>; rel="successor-version"`);
  if (now >= policy.sunset.getTime()) {
    throw new ApiError(
      'GONE',
      `This operation was removed on ${policy.sunset.toISOString().slice(0, 10)}: use ${policy.replacement}.`,
    );
  }
}
