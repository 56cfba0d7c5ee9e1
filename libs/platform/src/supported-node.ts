/**
 * The Node the apps and `npm start` run on, and the one line a start on an older one prints (issue #47): the apps'
 * first import (`require-supported-node.ts`) and scripts/start.js both call it. No import of anything, and only
 * erasable TypeScript, so that scripts/start.js can load this very file: Node 24 strips the types itself, and on an
 * older Node the script compiles it with the `typescript` package first.
 */

/** The oldest Node supported: the first release of the 24 LTS line. package.json's `engines` says the same (a test holds them equal). */
export const OLDEST_SUPPORTED_NODE = '24.11.0';

function parts(version: string): number[] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  return match ? match.slice(1, 4).map(Number) : undefined;
}

/** Whether `version` (`v24.22.3`, `20.19.0`) is at least OLDEST_SUPPORTED_NODE; an unreadable version is not. */
export function isSupportedNode(version: string): boolean {
  const have = parts(version);
  const floor = parts(OLDEST_SUPPORTED_NODE)!;
  if (!have) return false;
  for (let i = 0; i < 3; i++) if (have[i] !== floor[i]) return have[i] > floor[i];
  return true;
}

/** The one line that refuses `version`, or undefined when it is supported. */
export function unsupportedNodeLine(version: string): string | undefined {
  if (isSupportedNode(version)) return undefined;
  const floor = OLDEST_SUPPORTED_NODE.replace(/\.0$/, '');
  return (
    `Unsupported Node ${version}: the animals API runs on Node ${floor} or later (24 LTS). npm ci brings it on Linux ` +
    'and Intel macOS (node_modules/.bin/node, which every npm script runs on); elsewhere, install it'
  );
}

/** Prints the line and exits 1 when the running Node is older than the supported one. */
export function exitOnUnsupportedNode(version: string = process.version): void {
  const line = unsupportedNodeLine(version);
  if (line === undefined) return;
  console.error(line);
  process.exit(1);
}
