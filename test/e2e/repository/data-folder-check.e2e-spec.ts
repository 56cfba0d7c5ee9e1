import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changes, fingerprint } from '../../support/data-folder';

/** The check that a run leaves the checkout's .data/ alone (test/support/data-folder.ts) sees every kind of change. */
describe("the .data/ check of a test run (the global teardown's)", () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'petstore-data-check-'));
    mkdirSync(join(folder, 'pglite'));
    writeFileSync(join(folder, 'admin-token'), 'token\n');
    writeFileSync(join(folder, 'pglite', 'PG_VERSION'), '17\n');
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('finds nothing when nothing changed, and an absent folder is empty', () => {
    expect(changes(fingerprint(folder), fingerprint(folder))).toEqual([]);
    expect(fingerprint(join(folder, 'none'))).toEqual([]);
  });

  it('names a file added (the demo key a spawned gateway once wrote), changed, removed, or given another mode', () => {
    const before = fingerprint(folder);
    writeFileSync(join(folder, 'demo-api-key'), 'key\n');
    writeFileSync(join(folder, 'pglite', 'PG_VERSION'), '18\n');
    rmSync(join(folder, 'admin-token'));
    expect(changes(before, fingerprint(folder)).map((line) => line.replace(/ [0-7]+ [0-9a-f]{64}$/, ''))).toEqual([
      '- admin-token',
      '- pglite/PG_VERSION',
      '+ demo-api-key',
      '+ pglite/PG_VERSION',
    ]);
    const now = fingerprint(folder);
    chmodSync(join(folder, 'demo-api-key'), 0o600);
    expect(changes(now, fingerprint(folder))).toHaveLength(2);
  });
});
