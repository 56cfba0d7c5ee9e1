import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const GATEWAY = join(__dirname, '../../../apps/gateway/src');

/** Lines of the non-test TypeScript under `path` (a file or a folder). */
function lines(path: string): number {
  if (statSync(path).isDirectory()) return readdirSync(path).reduce((sum, name) => sum + lines(join(path, name)), 0);
  if (!path.endsWith('.ts') || path.endsWith('.spec.ts')) return 0;
  return readFileSync(path, 'utf8').split('\n').length - 1;
}

/**
 * Issue #35, "Done when": the import graph of apps/gateway/src shows no folder over 25 % of its lines (the control
 * plane once held the whole of it in consumers/). docs/architecture.md, "Folder sizes", names this test as the check.
 */
describe('the gateway folders', () => {
  it('hold at most a quarter of the gateway lines each', () => {
    const total = lines(GATEWAY);
    const folders = readdirSync(GATEWAY).filter((name) => statSync(join(GATEWAY, name)).isDirectory());
    expect(folders.length).toBeGreaterThan(10);
    const over = folders
      .map((name) => ({ name, share: lines(join(GATEWAY, name)) / total }))
      .filter(({ share }) => share > 0.25)
      .map(({ name, share }) => `${name}/ ${(share * 100).toFixed(1)} %`);
    expect(over).toEqual([]);
  });
});
