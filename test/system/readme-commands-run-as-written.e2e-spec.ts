import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/free-port';

const ROOT = join(__dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The commands the README gives a newcomer once `npm start` runs ("Your first request" up to "Other scripts"):
 * every line of its ```bash blocks, and the inline commands of that part that read its files or run its scripts
 * (`cat …`, `npm run -s keys …`). In the README's order.
 */
export function readmeCommands(readme: string): string[] {
  const part = readme.slice(readme.indexOf('## Your first request'), readme.indexOf('## Other scripts'));
  const commands: Array<{ at: number; command: string }> = [];
  for (const block of part.matchAll(/```bash\n([\s\S]*?)```/g))
    for (const line of block[1].split('\n'))
      if (line.trim()) commands.push({ at: block.index, command: line.replace(/\s+#.*$/, '').trim() });
  const prose = part.replace(/```[\s\S]*?```/g, (block) => ' '.repeat(block.length));
  for (const inline of prose.matchAll(/`((?:cat|npm run -s keys) [^`]+)`/g))
    commands.push({ at: inline.index, command: inline[1] });
  return commands.sort((a, b) => a.at - b.at).map((c) => c.command);
}

/**
 * Every command of the README runs as written on a fresh `npm start` (issue #48.5): no `$ADMIN_TOKEN` that npm
 * start never sets, no consumer that a fresh start does not have. `npm start` runs on free ports and an in-memory
 * database, its files in a folder of the test's own: the commands run there (its `.data/` is that start's; the
 * package's scripts are linked in), with the README's ports 3000 and 3002 read as the start's. Each must exit 0,
 * and each `curl` must get a 2xx (the test adds `--fail-with-body`: curl itself exits 0 on a 401 or a 404).
 */
describe('the README, run as written on a fresh npm start', () => {
  let npm: ChildProcess | undefined;

  afterAll(() => {
    if (npm?.pid)
      try {
        process.kill(-npm.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
  });

  it('extracts the commands of "Your first request"', () => {
    const commands = readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(commands.length).toBeGreaterThanOrEqual(5);
    expect(commands[0]).toBe('cat .data/demo-api-key');
    expect(commands.filter((c) => c.startsWith('curl '))).toHaveLength(4);
  });

  it('runs every one of them, each exiting 0 with a 2xx', async () => {
    const home = mkdtempSync(join(tmpdir(), 'petstore-readme-'));
    const data = join(home, '.data');
    mkdirSync(data);
    // `npm run -s keys` in that folder runs the package's own script.
    for (const name of ['package.json', 'scripts', 'node_modules', 'gateway'])
      symlinkSync(join(ROOT, name), join(home, name));
    const ports = {
      gateway: await freePort(),
      pets: await freePort(),
      admin: await freePort(),
      portal: await freePort(),
      console: await freePort(),
    };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(ports.gateway),
      PETS_PORT: String(ports.pets),
      ADMIN_PORT: String(ports.admin),
      PORTAL_PORT: String(ports.portal),
      CONSOLE_PORT: String(ports.console),
      METRICS_PORT: '0',
      PETS_METRICS_PORT: '0',
      PGLITE_DATA_DIR: 'memory://',
      ADMIN_TOKEN_FILE: join(data, 'admin-token'),
      CONSOLE_SESSION_SECRET_FILE: join(data, 'console-session-secret'),
      // The portal's development session secret too: never the checkout's .data/ (the run's teardown checks it).
      PORTAL_DATA_DIR: data,
      RATE_LIMIT_STATE_FILE: join(data, 'rate-limits.json'),
      NODE_ENV: 'development',
      SHUTDOWN_GRACE_MS: '2000',
    };
    for (const name of [
      'HOST',
      'DATABASE_URL',
      'GATEWAY_DATABASE_URL',
      'CONSOLE_DATABASE_URL',
      'PORTAL_DATABASE_URL',
      'REDIS_URL',
      'ADMIN_URL',
      'ADMIN_TOKEN',
      'DEMO_KEY',
      'LOG_LEVEL',
    ])
      delete env[name];
    npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 240_000;
    while (!/^Ready in \d+ s:$/m.test(output)) {
      if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`no Ready block:\n${output}`);
      await sleep(200);
    }

    // What the newcomer's shell has: no ADMIN_TOKEN, no ADMIN_URL; the start's own ports where the README says 3000 and 3002.
    const shell: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['ADMIN_TOKEN', 'ADMIN_URL', 'ADMIN_PORT', 'ADMIN_TOKEN_FILE', 'PORT']) delete shell[name];
    const results: Array<{ command: string; code: number; output: string }> = [];
    for (const written of readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'))) {
      const command = written
        .replace(/localhost:3000\b/g, `localhost:${ports.gateway}`)
        .replace(/localhost:3002\b/g, `localhost:${ports.admin}`)
        .replace(/^curl /, 'curl -sS --fail-with-body ');
      const ran = await promisify(execFile)('bash', ['-c', command], { cwd: home, env: shell, timeout: 60_000 }).then(
        ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: typeof error.code === 'number' ? error.code : 1,
          output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
        }),
      );
      results.push({ command: written, code: ran.code, output: ran.output.slice(0, 300) });
    }
    expect(results.filter((r) => r.code !== 0)).toEqual([]);
    expect(results).toHaveLength(readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8')).length);
  }, 300_000);
});
