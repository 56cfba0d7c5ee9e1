import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The library's templates and assets stay where they are in the repository (libs/web/views, libs/web/assets):
 * found by walking up from this file, which runs from libs/web/src under ts-jest and from dist/apps/<app>/libs/web/src
 * once built. Both lead to the repository's root, so nothing has to be copied into dist/.
 */
function findWebRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'libs', 'web');
    if (existsSync(path.join(candidate, 'views', 'layout.hbs'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`libs/web/views not found above ${start}`);
  }
}

export const WEB_ROOT = findWebRoot(__dirname);
export const WEB_VIEWS = path.join(WEB_ROOT, 'views');
export const WEB_ASSETS = path.join(WEB_ROOT, 'assets');
/** uPlot's dist folder, served as it is (never a CDN). */
export const UPLOT_DIST = path.dirname(require.resolve('uplot/dist/uPlot.min.css'));
