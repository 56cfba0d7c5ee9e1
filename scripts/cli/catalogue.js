// @ts-check
/** What the CLI reads from this checkout's files: the plans and the admin scopes. */
const { readFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

/**
 * The plans of the file the gateway reads (PLANS_FILE, relative to the working directory as for the gateway;
 * default gateway/plans.json of this checkout): name -> limits, or "custom" where each consumer carries its own.
 * Undefined where it cannot be read: the CLI may run apart from the gateway's files, and the admin API checks
 * the plan anyway (400).
 * @param {NodeJS.ProcessEnv} env
 * @returns {Record<string, unknown> | undefined}
 */
function readPlans(env) {
  const file = env.PLANS_FILE ? path.resolve(env.PLANS_FILE) : path.join(ROOT, 'gateway', 'plans.json');
  try {
    const { plans } = JSON.parse(readFileSync(file, 'utf8'));
    return plans && typeof plans === 'object' ? plans : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The admin scopes, from the committed admin API document (gateway/admin-openapi.json, generated from the
 * gateway's own list): the help never lists fewer than the gateway accepts. Read when help is asked for only
 * (a 170 KB document no other command needs).
 * @returns {string[] | undefined}
 */
function adminScopes() {
  try {
    const document = JSON.parse(readFileSync(path.join(ROOT, 'gateway', 'admin-openapi.json'), 'utf8'));
    return document.components.schemas.CreateAdminTokenDto.properties.scopes.items.enum;
  } catch {
    return undefined;
  }
}

module.exports = { readPlans, adminScopes };
