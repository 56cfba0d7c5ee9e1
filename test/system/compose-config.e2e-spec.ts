import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runIf } from '../support/skip';

const ROOT = join(__dirname, '../..');
// The Compose CI validates with (Debian's docker-compose, which CI installs); without it there is nothing to run.
const hasCompose = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;
// Compose v2 (docker/install-compose.sh installs its plugin): when present, both must read the file alike.
const hasComposeV2 = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0;

function compose(args: string[], env: Record<string, string>, command = ['docker-compose']) {
  const { INTERNAL_SECRET: _unset, ADMIN_TOKEN: _unsetToo, CURSOR_SECRET: _unsetEither, ...rest } = process.env;
  return spawnSync(command[0], [...command.slice(1), '-f', 'docker-compose.yml', ...args], {
    cwd: ROOT,
    env: { ...rest, ...env },
    encoding: 'utf8',
  });
}

/** What a Compose makes of each service: its environment and command (the YAML `config` prints, read by PyYAML). */
function resolved(
  command: string[],
  env: Record<string, string>,
): Record<string, { environment: Record<string, string>; command: unknown }> {
  const run = compose(['--profile', 'cluster', '--profile', 'tracing', '--profile', 'idp', 'config'], env, command);
  if (run.status !== 0) throw new Error(run.stderr);
  const toJson = spawnSync(
    '/usr/bin/python3',
    ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'],
    { input: run.stdout, encoding: 'utf8' },
  );
  if (toJson.status !== 0) throw new Error(toJson.stderr);
  const services = JSON.parse(toJson.stdout).services as Record<
    string,
    { environment?: Record<string, unknown>; command?: unknown }
  >;
  return Object.fromEntries(
    Object.entries(services).map(([name, service]) => [
      name,
      // 1.29 prints a value as YAML reads it, v2 as a string: compared as strings.
      {
        environment: Object.fromEntries(
          Object.entries(service.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]),
        ),
        command: service.command ?? null,
      },
    ]),
  );
}

/** How many containers the installed docker-compose would start per service: its own code reads the file. */
function replicas(env: Record<string, string>): Record<string, number> {
  const script = [
    'import json, sys',
    "sys.path.insert(0, '/usr/lib/python3/dist-packages')",
    'from compose.config import config',
    'from compose.config.environment import Environment',
    'from compose.project import Project',
    "details = config.find('.', ['docker-compose.yml'], Environment.from_env_file('.'))",
    "print(json.dumps({s['name']: Project.get_service_scale(None, s) for s in config.load(details).services}))",
  ].join('\n');
  const run = spawnSync('/usr/bin/python3', ['-c', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as Record<string, number>;
}

const ifCompose = runIf(hasCompose, 'docker-compose on PATH');
ifCompose.describe('docker-compose.yml', () => {
  const secret = {
    INTERNAL_SECRET: 'compose-test-0123456789abcdef',
    ADMIN_TOKEN: 'compose-test-admin-token-0123456789abcdef',
    CURSOR_SECRET: 'compose-test-cursor-secret-0123456789abcdef',
  };

  it('refuses to start without INTERNAL_SECRET, saying how to set one', () => {
    const run = compose(['config', '-q'], { ADMIN_TOKEN: secret.ADMIN_TOKEN, CURSOR_SECRET: secret.CURSOR_SECRET });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('set INTERNAL_SECRET to a random secret of 16+ characters');
  });

  it('refuses to start without ADMIN_TOKEN, saying how to set one', () => {
    const run = compose(['config', '-q'], {
      INTERNAL_SECRET: secret.INTERNAL_SECRET,
      CURSOR_SECRET: secret.CURSOR_SECRET,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('set ADMIN_TOKEN to a random token of 32+ characters');
  });

  it('refuses to start without CURSOR_SECRET, saying how to set one', () => {
    const run = compose(['config', '-q'], { INTERNAL_SECRET: secret.INTERNAL_SECRET, ADMIN_TOKEN: secret.ADMIN_TOKEN });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('set CURSOR_SECRET to a random secret of 32+ characters');
  });

  it("keeps Redis's data on a named volume", () => {
    const run = compose(['config'], secret);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/redis-data:\/data/);
  });

  it('passes the given secret to every app, and no published default', () => {
    const run = compose(['config'], secret);
    expect(run.status).toBe(0);
    expect(run.stdout).not.toContain('change-me');
    expect(run.stdout.match(/INTERNAL_SECRET: compose-test-0123456789abcdef/g)).toHaveLength(4); // migrate, pets, gateway, portal
  });

  it('runs GATEWAY_REPLICAS gateway instances with the Compose version CI validates with', () => {
    expect(replicas(secret).gateway).toBe(2);
    expect(replicas({ ...secret, GATEWAY_REPLICAS: '3' }).gateway).toBe(3);
  });

  it("nests no variable in another's default (docker-compose 1.29 misreads ${A:-${B}})", () => {
    const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
    expect(text.match(/\$\{[^}]*\$\{/g)).toBeNull();
  });

  it("gives the portal a mail server, the gateways' admin API on the compose network, and links without stray braces", () => {
    const services = resolved(['docker-compose'], { ...secret, BALANCER_PORT: '9090' });
    expect(services.migrate.environment.CURSOR_SECRET).toBe(secret.CURSOR_SECRET);
    expect(services.gateway.environment).toMatchObject({ ADMIN_HOST: '0.0.0.0', ADMIN_PORT: '3002', TRUST_PROXY: '1' });
    expect(services.portal.environment).toMatchObject({
      ADMIN_URL: 'http://gateway:3002',
      SMTP_URL: 'smtp://mail:1025',
      PORTAL_PUBLIC_URL: 'http://localhost:8080',
      PORTAL_API_URL: 'http://localhost:8080/v1',
      PORTAL_TRUST_PROXY: '1',
    });
    for (const service of Object.values(services))
      for (const value of Object.values(service.environment)) expect(value).not.toMatch(/\}$/);
  });

  it('gives the idp profile one issuer name for the browser and the containers, the balancer origin for CORS, and no published secret', () => {
    const services = resolved(['docker-compose'], secret);
    expect(services.idp.environment).toMatchObject({
      IDP_ISSUER: 'http://idp.localhost:3005',
      IDP_PORT: '3005',
      IDP_CLIENT_ID: 'demo-client',
      IDP_CLIENT_SECRET: '',
      IDP_PORTAL_CLIENT_SECRET: '',
      IDP_PORTAL_REDIRECT_URIS: 'http://localhost:8080/portal/login/oidc/demo/callback',
      IDP_CORS_ORIGINS: 'http://localhost:8080,http://127.0.0.1:8080',
    });
    // Another port moves the issuer with it: the same port inside and out.
    expect(resolved(['docker-compose'], { ...secret, IDP_PORT: '3999' }).idp.environment).toMatchObject({
      IDP_ISSUER: 'http://idp.localhost:3999',
      IDP_PORT: '3999',
    });
    // The containers reach it by the name the browser uses.
    const raw = compose(['--profile', 'idp', 'config'], secret, ['docker-compose']).stdout;
    expect(raw).toMatch(/aliases:\s*\n\s*- idp\.localhost/);
    expect(services.portal.environment.PORTAL_OIDC_PROVIDERS).toBe('');
    expect(services['idp-bind'].environment).toMatchObject({
      ADMIN_URL: 'http://gateway:3002',
      IDP_CLIENT_ID: 'demo-client',
    });
    expect(services.gateway.environment.OAUTH_ISSUERS).toBe('');
  });

  const ifComposeV2 = runIf(hasComposeV2, 'Compose v2 (docker compose)');
  ifComposeV2.it("is read alike by Compose v2 and docker-compose 1.29: every service's environment and command", () => {
    for (const env of [
      secret,
      { ...secret, BALANCER_PORT: '9090', PORTAL_PUBLIC_URL: 'http://localhost:9090', REDIS_URL: '' },
    ]) {
      expect(resolved(['docker', 'compose'], env)).toEqual(resolved(['docker-compose'], env));
    }
  });
});
