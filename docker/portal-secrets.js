#!/usr/bin/env node
/**
 * The compose file's one-shot `portal-secrets` service: what the developer portal needs beyond the header's three
 * secrets, made once and kept in the `portal-secrets` volume (PORTAL_SECRETS_DIR, /app/.data/portal), which the
 * portal mounts read-only.
 *   admin-token     an admin token for the portal's job only (`keys.js token create --for portal`: its own consumers,
 *                   Free plan, actsForUsers), minted with ADMIN_TOKEN through a gateway's admin API (ADMIN_URL);
 *                   kept while the admin API still accepts it (GET /token) and it acts for users; minted again when
 *                   the API does not know it (a new database), or when it was minted before the preset had
 *                   actsForUsers (the audit would not name developers nor record their failed sign-ins): the old
 *                   one is then revoked.
 *   session-secret  32 random bytes (hex) signing the portal's session cookies, unless PORTAL_SESSION_SECRET is set.
 * Exits 0 with both files in place, or 1 with one line saying why.
 */
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const dir = process.env.PORTAL_SECRETS_DIR || '/app/.data/portal';
const adminUrl = (process.env.ADMIN_URL || 'http://gateway:3002').replace(/\/+$/, '');
const keysCli = path.join(__dirname, '..', 'scripts', 'keys.js');

function writeSecret(name, value) {
  const file = path.join(dir, name);
  writeFileSync(`${file}.partial`, `${value}\n`, { mode: 0o600 });
  renameSync(`${file}.partial`, file);
}

const read = (name) => (existsSync(path.join(dir, name)) ? readFileSync(path.join(dir, name), 'utf8').trim() : '');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `{status: 200, record}` (GET /token's answer: id, actsForUsers…) when the token works; `{status: 401}` when the
 * admin API does not know it (anymore). Retries while the admin API starts.
 */
async function tokenStatus(token) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const answer = await fetch(`${adminUrl}/token`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(5000),
      });
      if (answer.status === 200) return { status: 200, record: await answer.json() };
      if (answer.status === 401) return { status: 401 };
      throw new Error(`GET ${adminUrl}/token answered ${answer.status}`);
    } catch (error) {
      if (attempt >= 30) throw error;
      await sleep(2000);
    }
  }
}

async function main() {
  if (!process.env.PORTAL_SESSION_SECRET && !read('session-secret')) {
    writeSecret('session-secret', randomBytes(32).toString('hex'));
    console.log('portal-secrets: made a session secret');
  }
  const kept = read('admin-token');
  const known = kept ? await tokenStatus(kept) : { status: 401 };
  if (known.status === 200 && known.record.actsForUsers === true) {
    console.log("portal-secrets: the portal's admin token is valid; kept");
    return;
  }
  if (!process.env.ADMIN_TOKEN) throw new Error("ADMIN_TOKEN is not set: cannot mint the portal's admin token");
  await tokenStatus(process.env.ADMIN_TOKEN); // waits for the admin API
  const output = execFileSync(
    process.execPath,
    [
      keysCli,
      'token',
      'create',
      '--for',
      'portal',
      '--name',
      `portal-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`,
    ],
    {
      env: { ...process.env, ADMIN_URL: adminUrl },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  const token = output.trim().split('\n').pop();
  writeSecret('admin-token', token);
  console.log(`portal-secrets: ${output.trim().split('\n')[0]}`);
  // A kept token that still works but lacks actsForUsers: replaced above, revoked here (it must not linger).
  if (known.status === 200 && known.record.id) {
    const revoked = await fetch(`${adminUrl}/tokens/${known.record.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN}` },
      signal: AbortSignal.timeout(5000),
    });
    console.log(
      revoked.ok
        ? 'portal-secrets: the kept token lacked actsForUsers: replaced and revoked'
        : `portal-secrets: the kept token lacked actsForUsers: replaced; revoking it answered ${revoked.status}`,
    );
  }
}

main().catch((error) => {
  console.error(`portal-secrets: ${String(error?.message ?? error).split('\n')[0]}`);
  process.exit(1);
});
