/** The processes the stack started: each one watched from its start, and all of them stopped together. */
const { spawn } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');

/** Past the apps' own grace period (SHUTDOWN_GRACE_MS, 10 s by default), a process still running is killed. */
const STOP_GRACE_MS = 15_000;

class StackProcesses {
  constructor() {
    this.children = [];
  }

  /**
   * Spawns `command` under `name`. Its stderr is passed on and its last lines kept, so that a process that dies
   * while starting can be reported in one line. `child.exited` resolves with { code, signal }.
   */
  start(name, command, args, env) {
    const child = spawn(command, args, { env, stdio: ['ignore', 'inherit', 'pipe'] });
    child.name = name;
    // The last two distinct lines: nginx, for one, ends with "still could not bind()" after the line that says why.
    const lastLines = [];
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      for (const line of chunk
        .toString()
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)) {
        if (lastLines.includes(line)) continue;
        lastLines.push(line);
        if (lastLines.length > 2) lastLines.shift();
      }
    });
    child.lastErrorLine = () => lastLines.join(' / ');
    child.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      // A command that cannot be spawned at all (ENOENT) emits 'error' and may never emit 'exit'.
      child.once('error', (error) => {
        lastLines.push(error.message);
        if (child.pid === undefined) resolve({ code: null, signal: null });
      });
    });
    this.children.push(child);
    return child;
  }

  get count() {
    return this.children.length;
  }

  names() {
    return this.children.map((child) => child.name);
  }

  /** SIGTERM to every process still running, SIGKILL to those left after the grace period; resolves when all have exited. */
  async stopAll(graceMs = STOP_GRACE_MS) {
    const running = this.children.filter(
      (child) => child.exitCode === null && child.signalCode === null && child.pid !== undefined,
    );
    for (const child of running) child.kill('SIGTERM');
    const allExited = Promise.all(running.map((child) => child.exited));
    const inTime = await Promise.race([allExited.then(() => true), sleep(graceMs, false, { ref: false })]);
    if (!inTime) {
      for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await allExited;
    }
  }
}

module.exports = { StackProcesses };
