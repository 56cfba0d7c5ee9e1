import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A plain Node script of `npm start`'s (scripts/start.js): it decides whether the build runs.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildInputsFingerprint, buildIsCurrent, recordBuild } = require('../../../scripts/build-inputs') as {
  buildInputsFingerprint(root: string): string;
  buildIsCurrent(root: string, fingerprint: string, outputs: string[]): boolean;
  recordBuild(root: string, fingerprint: string): void;
};

/** A checkout in miniature: what the build reads, what it writes, and what it ignores. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'petstore-build-inputs-'));
  const files: Record<string, string> = {
    'package.json': '{}',
    'package-lock.json': '{}',
    'nest-cli.json': '{}',
    'tsconfig.json': '{}',
    'apps/pets/tsconfig.app.json': '{}',
    'apps/pets/src/main.ts': 'export const a = 1;\n',
    'apps/pets/src/main.spec.ts': 'it("works", () => undefined);\n',
    'libs/errors/src/index.ts': 'export const b = 2;\n',
    'libs/client/dist/index.js': 'exports.c = 3;\n',
    'dist/apps/pets/main.js': 'exports.a = 1;\n',
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

const OUTPUTS = ['dist/apps/pets/main.js', 'libs/client/dist/index.js'];

describe('npm start: is the build up to date?', () => {
  let root: string;
  beforeEach(() => (root = checkout()));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is up to date after a recorded build of the same sources, and not before', () => {
    const fingerprint = buildInputsFingerprint(root);
    expect(buildInputsFingerprint(root)).toBe(fingerprint);
    expect(buildIsCurrent(root, fingerprint, OUTPUTS)).toBe(false);
    recordBuild(root, fingerprint);
    expect(buildIsCurrent(root, buildInputsFingerprint(root), OUTPUTS)).toBe(true);
  });

  it.each([
    [
      'a source is edited',
      (root: string) => writeFileSync(join(root, 'apps/pets/src/main.ts'), 'export const a = 10;\n'),
    ],
    [
      'a source is only touched',
      (root: string) => utimesSync(join(root, 'libs/errors/src/index.ts'), new Date(), new Date(Date.now() + 5000)),
    ],
    ['a source is added', (root: string) => writeFileSync(join(root, 'libs/errors/src/more.ts'), 'export {};\n')],
    ['a source is removed', (root: string) => rmSync(join(root, 'libs/errors/src/index.ts'))],
    ['an app tsconfig changes', (root: string) => writeFileSync(join(root, 'apps/pets/tsconfig.app.json'), '{"x":1}')],
    ['the lockfile changes', (root: string) => writeFileSync(join(root, 'package-lock.json'), '{"y":1}')],
    ['an output is missing', (root: string) => rmSync(join(root, 'dist/apps/pets/main.js'))],
  ])('builds again when %s', (_what, change) => {
    recordBuild(root, buildInputsFingerprint(root));
    change(root);
    expect(buildIsCurrent(root, buildInputsFingerprint(root), OUTPUTS)).toBe(false);
  });

  it.each([
    [
      'a spec changes',
      (root: string) =>
        writeFileSync(join(root, 'apps/pets/src/main.spec.ts'), 'it("still works", () => undefined);\n'),
    ],
    [
      'an output is rewritten',
      (root: string) => writeFileSync(join(root, 'libs/client/dist/index.js'), 'exports.c = 30;\n'),
    ],
    [
      'a package is installed under a folder it walks',
      (root: string) => mkdirSync(join(root, 'libs/client/node_modules/x'), { recursive: true }),
    ],
  ])('does not build when only %s', (_what, change) => {
    recordBuild(root, buildInputsFingerprint(root));
    change(root);
    expect(buildIsCurrent(root, buildInputsFingerprint(root), OUTPUTS)).toBe(true);
  });
});
