import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// CI runs the system files listed in test/system/engine-independent.js on the embedded engine only. A listed file
// that reads DATABASE_URL or REDIS_URL would lose its PostgreSQL and Redis run without anyone seeing it; a renamed
// one would run twice again (or, misspelt, be left out of nothing).
const system = join(__dirname, '../../system');
// A plain CommonJS list: .ci/run reads it with node -e.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const listed = require('../../system/engine-independent') as Record<string, string>;

describe('the system files CI runs on one engine only (test/system/engine-independent.js)', () => {
  it.each(Object.keys(listed))(
    '%s exists and reads neither DATABASE_URL nor REDIS_URL from the environment',
    (file) => {
      expect(existsSync(join(system, file))).toBe(true);
      const source = readFileSync(join(system, file), 'utf8');
      expect(source.match(/process\.env(\.|\[['"])(DATABASE_URL|REDIS_URL|GATEWAY_DATABASE_URL)/g)).toBeNull();
    },
  );

  it('gives the reason of each', () => {
    for (const reason of Object.values(listed)) expect(reason.length).toBeGreaterThan(20);
  });
});
