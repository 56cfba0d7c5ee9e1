import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import * as semver from 'semver';
import { OLDEST_SUPPORTED_NODE, exitOnUnsupportedNode, isSupportedNode, unsupportedNodeLine } from './supported-node';

const ROOT = join(__dirname, '../../..');

describe('the supported Node', () => {
  it('is the floor of package.json engines', () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } })
      .engines.node;
    expect(semver.minVersion(engines)?.version).toBe(OLDEST_SUPPORTED_NODE);
  });

  it('admits the 24 LTS line from its first LTS release on, and every later line', () => {
    expect(['v24.11.0', 'v24.22.3', '24.11.1', 'v26.0.0', 'v27.1.0'].filter(isSupportedNode)).toHaveLength(5);
    expect(['v20.20.2', 'v22.22.0', 'v24.10.9', 'v24.0.0', 'v23.11.0', '', 'vNaN'].filter(isSupportedNode)).toEqual([]);
  });

  it('refuses an older Node with one line naming it, the Node it needs and where npm puts it', () => {
    const line = unsupportedNodeLine('v20.20.2')!;
    expect(line).toBe(
      'Unsupported Node v20.20.2: the animals API runs on Node 24.11 or later (24 LTS). npm ci brings it on Linux ' +
        'and Intel macOS (node_modules/.bin/node, which every npm script runs on); elsewhere, install it',
    );
    expect(line).not.toContain('\n');
    expect(unsupportedNodeLine('v24.22.3')).toBeUndefined();
  });

  it('exits 1 after that one line on an older Node, and does nothing on a supported one', () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      exitOnUnsupportedNode('v24.22.3');
      expect([exit.mock.calls, error.mock.calls]).toEqual([[], []]);
      exitOnUnsupportedNode('v20.19.0');
      expect([exit.mock.calls, error.mock.calls]).toEqual([[[1]], [[unsupportedNodeLine('v20.19.0')]]]);
    } finally {
      exit.mockRestore();
      error.mockRestore();
    }
  });

  it('runs these tests: the Node npm ci brought (node_modules/.bin/node), where one was brought for this machine', () => {
    const brought = join(ROOT, 'node_modules/.bin/node');
    expect(isSupportedNode(process.version)).toBe(true);
    if (existsSync(brought)) expect(process.execPath).toBe(realpathSync(brought));
  });
});
