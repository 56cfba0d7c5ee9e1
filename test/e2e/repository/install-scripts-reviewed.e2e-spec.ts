import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as semver from 'semver';
import { runIf } from '../../support/skip';

// `npm ci` (npm 11.16 and later) ends with "npm warn install-scripts N packages have install scripts not yet covered
// by allowScripts" for every installed package with an install script that package.json's `allowScripts` neither
// allows nor denies. Each one is decided there (issue #48.10): @scarf/scarf's postinstall is a telemetry ping
// (swagger-ui-dist brings it), denied, and `scarfSettings.enabled: false` turns it off for an npm that does not read
// `allowScripts` yet (the image's); protobufjs's postinstall only prints a version-scheme warning for packages that
// depend on protobufjs directly (none here), denied too. Nothing the project runs needs either.

const root = join(__dirname, '../../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
  scarfSettings?: { enabled?: boolean };
};
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
};
const npmVersion = execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();

/** The allowScripts entry that decides a package: `name@version` first, then the name alone (npm's order). */
function decision(name: string, version: string): boolean | undefined {
  const entries = manifest.allowScripts ?? {};
  return entries[`${name}@${version}`] ?? entries[name];
}

describe('install scripts of the dependencies', () => {
  it('are each allowed or denied in package.json, the telemetry ping denied', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript)
      .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 13), version: entry.version! }));
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((p) => decision(p.name, p.version) === undefined)).toEqual([]);
    expect(decision('@scarf/scarf', withScripts.find((p) => p.name === '@scarf/scarf')?.version ?? '')).toBe(false);
    expect(manifest.scarfSettings?.enabled).toBe(false);
  });

  runIf(semver.gte(npmVersion, '11.16.0'), 'npm 11.16 or later (allowScripts)').it(
    'leave npm nothing to warn about: `npm install-scripts ls` finds none unreviewed',
    () => {
      const listed = JSON.parse(
        execFileSync('npm', ['install-scripts', 'ls', '--json'], { cwd: root, encoding: 'utf8' }),
      ) as { allowScripts?: unknown[] };
      expect(listed.allowScripts ?? []).toEqual([]);
    },
    30_000,
  );
});
