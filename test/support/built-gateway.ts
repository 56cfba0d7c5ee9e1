import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForHttp } from '../../scripts/wait';

const ROOT = join(__dirname, '../..');
export const GATEWAY_MAIN = join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js');

/**
 * The built gateway as its own process, for what only a process shows (SIGTERM, SIGKILL): built first when dist
 * has none (CI builds before testing; a stale dist in a working copy tests old code: `npx nest build gateway`).
 * Quiet, no metrics port, in-process counters unless `env` says otherwise. Its files (the development admin token
 * file, and the demo key minted beside it when the consumers database is empty) go to a folder of its own, removed
 * when it exits: never the checkout's .data/.
 */
export function spawnBuiltGateway(env: Record<string, string>): ChildProcess {
  if (!existsSync(GATEWAY_MAIN)) execFileSync('npx', ['nest', 'build', 'gateway'], { cwd: ROOT, stdio: 'ignore' });
  const files = mkdtempSync(join(tmpdir(), 'petstore-built-gateway-'));
  const child = spawn(process.execPath, [GATEWAY_MAIN], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'error',
      NODE_ENV: 'test',
      REDIS_URL: '',
      ADMIN_TOKEN_FILE: join(files, 'admin-token'),
      ...env,
    },
  });
  child.once('exit', () => rmSync(files, { recursive: true, force: true }));
  // What it said last (LOG_LEVEL error: nothing unless it fails), for the reason a start did not happen.
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => (said = (said + chunk.toString()).slice(-2_000)));
  stderrOf.set(child, () => said);
  return child;
}

const stderrOf = new WeakMap<ChildProcess, () => string>();

/**
 * Waits until the spawned gateway answers `url` (its /health/live), at most `timeoutMs`: on a loaded 2-core
 * runner a start takes far more than its usual 2-3 s. Fails at once, with the process's last words, when it exits.
 */
export async function waitUntilLive(child: ChildProcess, url: string, timeoutMs = 75_000): Promise<void> {
  let onExit: (code: number | null) => void = () => undefined;
  const exited = new Promise<never>((_, reject) => {
    onExit = (code) =>
      reject(new Error(`the gateway exited (${code}) before ${url} answered: ${stderrOf.get(child)?.() ?? ''}`));
    child.once('exit', onExit);
  });
  try {
    await Promise.race([waitForHttp(url, timeoutMs), exited]);
  } finally {
    child.off('exit', onExit);
  }
}
