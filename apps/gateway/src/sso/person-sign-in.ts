import { createHash } from 'node:crypto';
import { ApiError } from '@app/errors';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { AdminRequestOrigin, ANONYMOUS_ACTOR } from '../access/admin-context';
import { AdminTokensService } from '../access/admin-tokens.service';
import { AuditLog } from '../access/audit-log';
import { Clock } from '../clock';
import { AdminOidcConfig, AdminOidcRole } from '../config/admin-oidc.config';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { DEFAULT_TOKEN_ALGORITHMS } from '../config/oauth.config';
import { IssuerKeys, IssuerUnreachable } from '../tokens/issuer-keys';
import type { AdminScope } from '../access/admin-scopes';

/** At most this many exchanges per source address and minute (the console is one source: its people's sign-ins). */
export const SIGN_INS_PER_MINUTE = 60;

/** The label every audit row of a person's session carries: email, then who vouches for it. */
export function personLabel(issuer: string, subject: string, email: string): string {
  return `${email} (${subject} at ${issuer})`.slice(0, 320);
}

/**
 * What several roles grant together: the union of their scopes; plans only when a matched role is limited to plans
 * (then the union of those plans applies to every scope): a restricted role's scopes never reach further through a
 * broader role held beside it.
 */
export function grantOf(roles: readonly AdminOidcRole[]): { scopes: AdminScope[]; plans: string[] | null } {
  const scopes = [...new Set(roles.flatMap((role) => role.scopes))];
  const limited = roles.filter((role) => role.plans !== null);
  const plans = limited.length === 0 ? null : [...new Set(limited.flatMap((role) => role.plans!))];
  return { scopes, plans };
}

function rolesIn(claims: JWTPayload, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export interface PersonSession {
  token: string;
  id: string;
  name: string;
  person: string;
  email: string;
  scopes: string[];
  plans: string[] | null;
  expiresAt: Date;
}

/**
 * A person's sign-in with the operators' identity provider (issue #51, docs/sso.md): the ID token the console
 * received is verified here (jose, the issuer's keys: iss, aud, exp, iat no older than the configured age,
 * asymmetric algorithms only), taken once (a replay is 401), its roles mapped to admin scopes (none mapped: 403),
 * and a short-lived admin token named for the person is issued. The console holds no token that could do this.
 */
@Injectable()
export class PersonSignIn {
  private readonly logger = new Logger('PersonSignIn');
  private readonly config?: AdminOidcConfig;
  private readonly keys?: IssuerKeys;
  private readonly perSource = new Map<string, { minute: number; count: number }>();

  constructor(
    @Inject(GATEWAY_CONFIG) gateway: GatewayConfig,
    private readonly tokens: AdminTokensService,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {
    this.config = gateway.adminOidc;
    if (this.config)
      this.keys = new IssuerKeys(
        {
          issuer: this.config.issuer,
          audience: this.config.audience,
          algorithms: DEFAULT_TOKEN_ALGORITHMS,
          clientIdClaim: 'sub',
          clockSkewS: this.config.clockSkewS,
          introspectionCacheMs: 0,
          introspectionConcurrency: 1,
          timeoutMs: this.config.timeoutMs,
          jwksCooldownMs: 10_000,
          jwksMaxAgeMs: 600_000,
        },
        () => performance.now(),
        (error) => this.logger.warn(`operators' identity provider unreachable: ${error.message}`),
      );
  }

  async exchange(origin: AdminRequestOrigin, idToken: string, address: string | null): Promise<PersonSession> {
    const config = this.config;
    if (!config || !this.keys)
      throw new ApiError('NOT_FOUND', 'No identity provider is configured for operators (ADMIN_OIDC_ISSUER).');
    this.admit(origin.source ?? 'unknown');
    const refuse = async (reason: string, subject: string | null) => {
      await this.audit
        .recordSignInEvent({ ...origin, actor: ANONYMOUS_ACTOR }, { kind: 'sign-in-failed', subject, address, reason })
        .catch((error: Error) => this.logger.warn(`audit event not recorded: ${error.message}`));
    };
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.keys.keyFor, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: [...DEFAULT_TOKEN_ALGORITHMS],
        clockTolerance: config.clockSkewS,
        maxTokenAge: `${Math.floor(config.maxIdTokenAgeMs / 1000)}s`,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: new Date(this.clock.now()),
      }));
    } catch (error) {
      if (error instanceof IssuerUnreachable)
        throw new ApiError('SERVICE_UNAVAILABLE', "The operators' identity provider is unreachable: retry shortly.", {
          'Retry-After': String(error.retryAfterS),
        });
      const why = error instanceof joseErrors.JOSEError ? error.code : 'ERR_INVALID';
      await refuse('INVALID_ID_TOKEN', null);
      throw new ApiError(
        'UNAUTHORIZED',
        `The ID token was not accepted (${why}): it must come from ${config.issuer} for ${config.audience}, signed, and at most ${config.maxIdTokenAgeMs / 60_000} minutes old.`,
      );
    }
    // Several audiences: the console must be the one it was issued to (OpenID Connect Core 3.1.3.7).
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== config.audience) {
      await refuse('INVALID_ID_TOKEN', null);
      throw new ApiError('UNAUTHORIZED', `The ID token was issued to ${String(claims.azp)}, not ${config.audience}.`);
    }
    const email = typeof claims.email === 'string' && claims.email !== '' ? claims.email : undefined;
    const person = personLabel(config.issuer, claims.sub!, email ?? claims.sub!);
    const roles = rolesIn(claims, config.rolesClaim).flatMap((role) => {
      const grant = config.roles.get(role);
      return grant ? [grant] : [];
    });
    if (roles.length === 0) {
      await refuse('NO_MAPPED_ROLE', person);
      throw new ApiError(
        'FORBIDDEN',
        `${email ?? claims.sub} holds no role the gateway maps to admin scopes (claim "${config.rolesClaim}"): ask an administrator.`,
      );
    }
    const { scopes, plans } = grantOf(roles);
    const now = this.clock.now();
    const expiresAt = new Date(now + config.sessionMs);
    const { token, record } = await this.tokens
      .issueForPerson(origin, {
        person,
        name: `sso:${email ?? claims.sub}`.slice(0, 64),
        scopes,
        plans,
        expiresAt,
        idTokenHash: createHash('sha256').update(idToken).digest('hex'),
        // Past this, the ID token is refused as too old: its hash need not be kept longer.
        idTokenUsableUntil: new Date(claims.iat! * 1000 + config.maxIdTokenAgeMs + config.clockSkewS * 1000),
        address,
      })
      .catch(async (error: unknown) => {
        if (error instanceof ApiError && error.code === 'UNAUTHORIZED') await refuse('ID_TOKEN_REPLAYED', person);
        throw error;
      });
    return {
      token,
      id: record.id,
      name: record.name,
      person,
      email: email ?? claims.sub!,
      scopes: record.scopes,
      plans: record.plans,
      expiresAt,
    };
  }

  /** SIGN_INS_PER_MINUTE per source address (counted in memory, per instance): 429 past it. */
  private admit(source: string): void {
    const minute = Math.floor(this.clock.now() / 60_000);
    const seen = this.perSource.get(source);
    const count = seen?.minute === minute ? seen.count + 1 : 1;
    if (this.perSource.size > 10_000) this.perSource.clear();
    this.perSource.set(source, { minute, count });
    if (count > SIGN_INS_PER_MINUTE)
      throw new ApiError('RATE_LIMITED', `At most ${SIGN_INS_PER_MINUTE} sign-ins a minute from one address.`, {
        'Retry-After': String(60 - Math.floor((this.clock.now() / 1000) % 60)),
      });
  }
}
