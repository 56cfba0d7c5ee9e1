/** The processes the stack started: each one watched from its start, and all of them stopped together. */
const { spawn } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');
const { AppOutput } = require('../start-output');

/** Past the apps' own grace period (SHUTDOWN_GRACE_MS, 10 s by default), a process still running is killed. */
const STOP_GRACE_MS = 15_000;

class StackProcesses {
  constructor() {
    this.children = [];
    /**
     * The apps' lines as `npm start` prints them (scripts/start-output.js): `<name> | HH:MM:SS <level> ...`, one line
     * per request (the gateway's), the stack's readiness polls held back until `ready()`. Room for "gateway-32".
     */
    this.output = new AppOutput({ nameWidth: 10, gatewayInFront: true });
  }

  /** The stack is up: from now on a request to /health is someone else's and is shown. */
  ready() {
    this.output.ready();
  }

  /**
   * Spawns `command` under `name`. Its output is printed as `npm start` prints it, and the last lines of its stderr
   * kept, so that a process that dies while starting can be reported in one line. `child.exited` resolves with
   * { code, signal }.
   */
  start(name, command, args, env) {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.name = name;
    this.output.follow(name, child.stdout, process.stdout);
    this.output.follow(name, child.stderr, process.stderr);
    // The last two distinct lines: nginx, for one, ends with "still could not bind()" after the line that says why.
    const lastLines = [];
    child.stderr.on('data', (chunk) => {
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
