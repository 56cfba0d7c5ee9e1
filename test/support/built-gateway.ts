import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
export const GATEWAY_MAIN = join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js');

/**
 * The built gateway as its own process, for what only a process shows (SIGTERM, SIGKILL): built first when dist
 * has none (CI builds before testing; a stale dist in a working copy tests old code: `npx nest build gateway`).
 * Quiet, no metrics port, in-process counters unless `env` says otherwise.
 */
export function spawnBuiltGateway(env: Record<string, string>): ChildProcess {
  if (!existsSync(GATEWAY_MAIN)) execFileSync('npx', ['nest', 'build', 'gateway'], { cwd: ROOT, stdio: 'ignore' });
  return spawn(process.execPath, [GATEWAY_MAIN], {
    cwd: ROOT,
    stdio: 'ignore',
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'error',
      NODE_ENV: 'test',
      REDIS_URL: '',
      ...env,
    },
  });
}
