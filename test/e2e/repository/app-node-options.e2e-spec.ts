import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { APP_NODE_OPTIONS, appNodeOptions } = require('../../../scripts/app-node-options') as {
  APP_NODE_OPTIONS: string;
  appNodeOptions: (user?: string) => string;
};

const read = (file: string) => readFileSync(join(__dirname, '../../..', file), 'utf8');

/** The apps' default Node flags live in scripts/app-node-options.js; the image and compose must carry the same. */
describe('default Node flags of the apps', () => {
  it('sets a heap limit', () => {
    expect(APP_NODE_OPTIONS).toMatch(/--max-old-space-size=\d+/);
  });

  it('holds the young generation to at most half the old one', () => {
    // Node 24's V8 sizes semi-spaces from the machine's memory (64 MB each on 23 GiB: 192 MB of young generation
    // beside 96 MB of old); with that the gateway ran a Mark-Compact every ~40 requests (docs/benchmarks.md).
    const limit = execFileSync(process.execPath, ['-p', 'require("v8").getHeapStatistics().heap_size_limit'], {
      env: { ...process.env, NODE_OPTIONS: APP_NODE_OPTIONS },
    });
    const oldMb = Number(/--max-old-space-size=(\d+)/.exec(APP_NODE_OPTIONS)![1]);
    const youngMb = Number(limit) / 2 ** 20 - oldMb;
    expect(youngMb).toBeLessThanOrEqual(oldMb / 2);
  });

  it("puts the user's NODE_OPTIONS after ours, so that theirs wins", () => {
    expect(appNodeOptions('--max-old-space-size=256')).toBe(`${APP_NODE_OPTIONS} --max-old-space-size=256`);
    expect(appNodeOptions('')).toBe(APP_NODE_OPTIONS);
  });

  it('is what the Dockerfile and docker-compose.yml give the apps', () => {
    expect(read('Dockerfile')).toContain(`ENV NODE_OPTIONS="${APP_NODE_OPTIONS}"\n`);
    expect(read('docker-compose.yml')).toContain(`NODE_OPTIONS: \${NODE_OPTIONS:-${APP_NODE_OPTIONS}}\n`);
  });
});
