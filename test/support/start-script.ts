import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `scripts/start.js` started by a system test, once its Ready block was printed. */
export interface StartedScript {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * Runs `scripts/start.js --build <apps>` (what `npm start` runs) with `env` over this process's, in a process group
 * of its own (so that `stopStartScript` stops it and every app it started), and waits for its Ready block.
 */
export async function startScriptUntilReady(
  apps: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<StartedScript> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start.js'), '--build', ...apps], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started = { child, output: () => output };
  const deadline = Date.now() + timeoutMs;
  while (!/^Ready in \d+ s:$/m.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stopStartScript(started);
      throw new Error(`no Ready block:\n${output}`);
    }
    await sleep(200);
  }
  return started;
}

/** Stops the script's process group (SIGTERM) and waits for the script to exit. */
export async function stopStartScript(started: StartedScript | undefined): Promise<void> {
  const child = started?.child;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
}
