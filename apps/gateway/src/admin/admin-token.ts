import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigurationError } from '@app/platform';
import { GatewayConfig } from '../config/gateway.config';

/**
 * The admin token: ADMIN_TOKEN when set (required in production: the config refuses to load without it).
 * In development a random one is created once in ADMIN_TOKEN_FILE (mode 600, under .data/), shared by every
 * instance and read by `npm run keys`, so that a newcomer never has to set one.
 */
export function resolveAdminToken(config: GatewayConfig): string {
  if (config.admin.token) return config.admin.token;
  if (config.production) throw new ConfigurationError('ADMIN_TOKEN must be set in production');
  const file = config.admin.tokenFile;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(file), { recursive: true });
  const token = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return token;
  } catch (error) {
    // Another instance created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw error;
  }
}
