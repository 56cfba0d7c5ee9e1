import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { adminCall } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

const run = promisify(execFile);
const SCRIPT = join(__dirname, '../../../docker/portal-secrets.js');

/**
 * The compose stack's portal-secrets script (docker/portal-secrets.js) against a real admin API: a kept portal token
 * is kept only while it works and acts for users; one minted before the preset had actsForUsers is replaced (and
 * revoked), so that the audit names developers and records their failed sign-ins (issue #36.4, #37.4).
 */
describe('portal-secrets: the portal token the compose stack keeps', () => {
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', gateway: {}, timeoutMs: 180_000 });

  let dir: string;

  const secrets = async () =>
    run(process.execPath, [SCRIPT], {
      env: {
        ...process.env,
        ADMIN_URL: stack.gateway.adminUrl,
        ADMIN_TOKEN: stack.gateway.adminToken,
        PORTAL_SECRETS_DIR: dir,
        PORTAL_SESSION_SECRET: 'x'.repeat(32),
      },
      timeout: 120_000,
    });
  const kept = () => readFileSync(join(dir, 'admin-token'), 'utf8').trim();
  const record = async (token: string) => adminCall(stack.gateway, 'GET', '/token', undefined, token);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'portal-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('re-mints a kept token that lacks actsForUsers, revokes it, and keeps the new one on the next run', async () => {
    const old = await adminCall(stack.gateway, 'POST', '/tokens', {
      name: 'portal-old',
      scopes: ['consumers:read', 'consumers:write', 'keys:write', 'usage:read'],
      ownConsumersOnly: true,
      plans: ['free'],
    });
    expect(old.status).toBe(201);
    const oldToken = (old.body as { token: string }).token;
    writeFileSync(join(dir, 'admin-token'), `${oldToken}\n`);

    const first = await secrets();
    expect(first.stdout).toMatch(/lacked actsForUsers: replaced and revoked/);
    const minted = kept();
    expect(minted).not.toBe(oldToken);
    expect((await record(minted)).body).toMatchObject({ actsForUsers: true, ownConsumersOnly: true });
    // Every instance trusts what it read of a token for 0.5 s: refused within 3 s (a loaded machine).
    const deadline = Date.now() + 3000;
    let status = (await record(oldToken)).status;
    while (status !== 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await record(oldToken)).status;
    }
    expect(status).toBe(401);

    const second = await secrets();
    expect(second.stdout).toMatch(/valid; kept/);
    expect(kept()).toBe(minted);
  });

  it('mints a token when the kept one is unknown to the admin API (a new database)', async () => {
    writeFileSync(join(dir, 'admin-token'), 'adm_not-a-token-this-api-knows\n');
    await secrets();
    expect((await record(kept())).body).toMatchObject({ actsForUsers: true });
  });
});
