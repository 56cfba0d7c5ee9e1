import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The checkout's `.data/`: `npm start`'s databases, the demo key and the admin token. No test may touch it. */
export const DATA_FOLDER = join(__dirname, '../../.data');

const VARIABLE = 'TEST_DATA_FOLDER_BEFORE';

/** Every file under `folder` (relative path, mode and SHA-256 of its bytes), sorted; [] when it does not exist. */
export function fingerprint(folder = DATA_FOLDER): string[] {
  if (!existsSync(folder)) return [];
  const lines: string[] = [];
  const walk = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      try {
        const stat = statSync(path);
        if (stat.isDirectory()) walk(path, `${prefix}${name}/`);
        else
          lines.push(
            `${prefix}${name} ${stat.mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`,
          );
      } catch (error) {
        // Gone between the listing and the read (a process writing there): seen as missing.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  };
  walk(folder, '');
  return lines;
}

/** What differs between two fingerprints: `- <file>` as it was, `+ <file>` as it is (a changed file gives both). */
export function changes(before: string[], after: string[]): string[] {
  const was = new Set(before);
  const is = new Set(after);
  return [
    ...before.filter((line) => !is.has(line)).map((line) => `- ${line}`),
    ...after.filter((line) => !was.has(line)).map((line) => `+ ${line}`),
  ];
}

/** Global set-up: what `.data/` holds before the run. */
export function recordDataFolder(): void {
  process.env[VARIABLE] = JSON.stringify(fingerprint());
}

/**
 * Global teardown: `.data/` byte for byte as it was. On CI (CI set, nothing else runs there) a change fails the run,
 * naming it; on a developer's machine it is a warning, since `npm start` or `npm run stack` running beside the tests
 * in the same checkout legitimately writes there (TEST_DATA_FOLDER_STRICT=1 makes it fail there too).
 */
export function checkDataFolder(): void {
  const recorded = process.env[VARIABLE];
  if (recorded === undefined) return;
  const changed = changes(JSON.parse(recorded) as string[], fingerprint());
  if (changed.length === 0) return;
  const report = `the checkout's .data/ (${DATA_FOLDER}) changed during the run; tests write only to folders of their own:\n${changed.join('\n')}`;
  if (process.env.CI || process.env.TEST_DATA_FOLDER_STRICT === '1') throw new Error(report);
  process.stderr.write(
    `\nwarning: ${report}\n(a failure on CI; here npm start or npm run stack may have written it)\n`,
  );
}
