#!/usr/bin/env node
/**
 * The compose file's one-shot `portal-secrets` service: what the developer portal needs beyond the header's three
 * secrets, made once and kept in the `portal-secrets` volume (PORTAL_SECRETS_DIR, /app/.data/portal), which the
 * portal mounts read-only.
 *   admin-token     an admin token for the portal's job only (`keys.js token create --for portal`: its own consumers,
 *                   Free plan), minted with ADMIN_TOKEN through a gateway's admin API (ADMIN_URL); kept while the
 *                   admin API still accepts it (GET /token), minted again when it does not (a new database).
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

/** 200: the token works; 401: the admin API does not know it (anymore). Retries while the admin API starts. */
async function tokenStatus(token) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const answer = await fetch(`${adminUrl}/token`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(5000),
      });
      if (answer.status === 200 || answer.status === 401) return answer.status;
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
  if (kept && (await tokenStatus(kept)) === 200) {
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
}

main().catch((error) => {
  console.error(`portal-secrets: ${String(error?.message ?? error).split('\n')[0]}`);
  process.exit(1);
});
