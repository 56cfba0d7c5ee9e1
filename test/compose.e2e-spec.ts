import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
// The Compose CI validates with (Debian's docker-compose, which CI installs); without it there is nothing to run.
const hasCompose = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;

function compose(args: string[], env: Record<string, string>) {
  const { INTERNAL_SECRET: _unset, ADMIN_TOKEN: _unsetToo, CURSOR_SECRET: _unsetEither, ...rest } = process.env;
  return spawnSync('docker-compose', ['-f', 'docker-compose.yml', ...args], { cwd: ROOT, env: { ...rest, ...env }, encoding: 'utf8' });
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
  const run = spawnSync('/usr/bin/python3', ['-c', script], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as Record<string, number>;
}

(hasCompose ? describe : describe.skip)('docker-compose.yml', () => {
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
    const run = compose(['config', '-q'], { INTERNAL_SECRET: secret.INTERNAL_SECRET, CURSOR_SECRET: secret.CURSOR_SECRET });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('set ADMIN_TOKEN to a random token of 32+ characters');
  });

  it('refuses to start without CURSOR_SECRET, saying how to set one', () => {
    const run = compose(['config', '-q'], { INTERNAL_SECRET: secret.INTERNAL_SECRET, ADMIN_TOKEN: secret.ADMIN_TOKEN });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('set CURSOR_SECRET to a random secret of 32+ characters');
  });

  it('keeps Redis\'s data on a named volume', () => {
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
});
