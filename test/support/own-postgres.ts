import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port';

const BIN = '/usr/lib/postgresql/15/bin';

/** Whether a private PostgreSQL cluster can be started here (the server binaries are installed). */
export const canRunOwnPostgres = existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'pg_ctl'));

/**
 * A PostgreSQL cluster of this test's own, in a temporary folder, that the test may stop and start at will (the
 * shared server on 5432 must never be stopped). PostgreSQL refuses to run as root: run as `postgres` then.
 */
export class OwnPostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly asUser: string[],
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<OwnPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-own-pg-'));
    const root = process.getuid?.() === 0;
    if (root) {
      chmodSync(dir, 0o777);
      execFileSync('chown', ['postgres', dir]);
    }
    const asUser = root ? ['runuser', '-u', 'postgres', '--'] : [];
    const pg = new OwnPostgres(dir, await freePort(), asUser);
    pg.run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    pg.start();
    return pg;
  }

  start(): void {
    this.run('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
  }

  /** `fast`: active sessions are terminated (57P01), as in a restart by an operator. */
  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', mode, '-w', 'stop']);
  }

  destroy(): void {
    try {
      this.stop('immediate');
    } catch {
      /* already stopped */
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private run(tool: string, args: string[]): void {
    const [command, ...rest] = [...this.asUser, join(BIN, tool), ...args];
    execFileSync(command, rest, { stdio: 'pipe' });
  }
}
