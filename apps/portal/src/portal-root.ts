import { existsSync } from 'node:fs';
import path from 'node:path';

/** apps/portal (views, assets), found from this file under ts-jest (apps/portal/src) and once built (dist/apps/portal/apps/portal/src). */
function findPortalRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'apps', 'portal');
    if (existsSync(path.join(candidate, 'views', 'dashboard.hbs'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`apps/portal/views not found above ${start}`);
  }
}

export const PORTAL_ROOT = findPortalRoot(__dirname);
export const PORTAL_VIEWS = path.join(PORTAL_ROOT, 'views');
export const PORTAL_ASSETS = path.join(PORTAL_ROOT, 'assets');
