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
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path, `${prefix}${name}/`);
      else
        lines.push(
          `${prefix}${name} ${stat.mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`,
        );
    }
  };
  walk(folder, '');
  return lines;
}

/** Global set-up: what `.data/` holds before the run. */
export function recordDataFolder(): void {
  process.env[VARIABLE] = JSON.stringify(fingerprint());
}

/** Global teardown: `.data/` byte for byte as it was, else the run fails naming what changed. */
export function checkDataFolder(): void {
  const recorded = process.env[VARIABLE];
  if (recorded === undefined) return;
  const before = new Set(JSON.parse(recorded) as string[]);
  const after = new Set(fingerprint());
  const changed = [
    ...[...before].filter((line) => !after.has(line)).map((line) => `- ${line}`),
    ...[...after].filter((line) => !before.has(line)).map((line) => `+ ${line}`),
  ];
  if (changed.length > 0)
    throw new Error(
      `a test changed the checkout's .data/ (${DATA_FOLDER}); tests write only to folders of their own:\n${changed.join('\n')}`,
    );
}
