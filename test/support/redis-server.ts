import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from '../../scripts/free-port';

/** Whether a redis-server binary is on the PATH (tests that stop their own Redis need one). */
export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/** redis-server options that keep nothing: no RDB snapshot, no append-only file (the default of OwnRedisServer). */
export const NO_PERSISTENCE = ['--save', '', '--appendonly', 'no'];

/**
 * A throwaway redis-server of the test's own, on a free port, without persistence unless asked for, that the
 * test may stop (kill -9) and start again on the same port (never the shared Redis on 6379).
 */
export class OwnRedisServer {
  private process?: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly extraArgs: string[],
    private readonly persistence: string[],
  ) {}

  /**
   * `extraArgs(port)`: more redis-server options (a cluster node's, a replica's), or a config file followed by
   * options (a sentinel's: `[file, '--sentinel']`), given the chosen port. `persistence`: the options that say
   * what the server keeps (NO_PERSISTENCE by default), with `--dir` a folder of the test's own when it keeps
   * something; started again, the server reloads what it kept there.
   */
  static async start(
    extraArgs: (port: number) => string[] | Promise<string[]> = () => [],
    persistence = NO_PERSISTENCE,
  ): Promise<OwnRedisServer> {
    const port = await freePort();
    const server = new OwnRedisServer(port, await extraArgs(port), persistence);
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // A config file (a sentinel's) must come first on redis-server's command line.
    const file = this.extraArgs[0] && !this.extraArgs[0].startsWith('--') ? [this.extraArgs[0]] : [];
    const options = this.extraArgs.slice(file.length);
    const args = [
      ...file,
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      ...this.persistence,
      '--enable-debug-command',
      'yes',
      ...options,
    ];
    this.process = spawn('redis-server', args, { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      try {
        await client.connect();
        if ((await client.ping()) === 'PONG') return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        client.disconnect();
      }
    }
    throw new Error(`redis-server on port ${this.port} did not start`);
  }

  /** Kills the server (kill -9: what it did not persist is gone) and waits for the process to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.process = undefined;
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered, like a Redis that hangs. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  /** Lets a paused server run again (SIGCONT): it answers what it received meanwhile. */
  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /** A client of its own, for the test to inspect or disturb the server. */
  client(): Redis {
    const client = new Redis(this.url, { maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    return client;
  }
}
