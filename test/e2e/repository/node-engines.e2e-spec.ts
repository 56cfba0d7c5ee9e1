import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as semver from 'semver';

// `npm ci` warns (EBADENGINE) for every installed package whose `engines.node` refuses the running Node. The
// project declares the Node it supports in package.json; this test holds every package in the lock to it, so a
// bump that needs a newer Node fails here rather than in a newcomer's terminal (docs/operations.md, "Node").

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const root = join(__dirname, '../../..');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const declared = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines
  .node;

/** The oldest Node the project promises to run on, and the newest 20.x line it is tested on (this machine's). */
const oldestSupported = semver.minVersion(declared)!.version;

function refusing(node: string): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && !Array.isArray(entry.engines) && entry.engines?.node)
    .filter(([, entry]) => !semver.satisfies(node, (entry.engines as { node: string }).node))
    .map(([path, entry]) => `${path}@${entry.version} wants node ${(entry.engines as { node: string }).node}`);
}

describe('the Node the project declares (package.json engines)', () => {
  it('declares a range with an oldest version', () => {
    expect(semver.validRange(declared)).not.toBeNull();
    expect(oldestSupported).toBe('20.19.0');
  });

  it('every package in package-lock.json admits the oldest declared Node, so npm ci prints no EBADENGINE', () => {
    expect(refusing(oldestSupported)).toEqual([]);
  });

  it('every package in package-lock.json admits the Node running the tests, when the project declares it', () => {
    if (!semver.satisfies(process.version, declared)) {
      console.log(`skipped: Node ${process.version} is outside the declared ${declared}`);
      return;
    }
    expect(refusing(process.version)).toEqual([]);
  });
});
