import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { isSupportedNode } from '@app/platform/supported-node';

/**
 * A Node older than the supported one on PATH outside node_modules (a machine's own Node 20, as on a fresh CI
 * machine, where npm ci brings the project's 24), if any: what a start on an unsupported Node and the client's
 * users on Node 20 are tested with.
 */
export function olderNode(): { node: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const node = join(dir, 'node');
    if (dir.includes('node_modules') || !existsSync(node)) continue;
    const version = execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
    if (!isSupportedNode(version)) return { node, version };
  }
  return undefined;
}
