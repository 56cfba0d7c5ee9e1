// @ts-check
/**
 * The admin API as the CLI reaches it: where it is and with which token (ADMIN_URL, ADMIN_TOKEN, or what a
 * development gateway wrote to .data/), and a client typed on the generated admin API types
 * (libs/web/src/generated/admin-api.ts, from gateway/admin-openapi.json) through openapi-fetch: a wrong path,
 * parameter or body is a type error (`npm run typecheck`), and nothing is built per call.
 */
const { readFileSync } = require('node:fs');
const path = require('node:path');
const createClient = require('openapi-fetch').default;

/** @typedef {import('../../libs/web/src/generated/admin-api').paths} AdminPaths */
/** @typedef {import('../../libs/web/src/generated/admin-api').components['schemas']} AdminSchemas */
/** @typedef {import('openapi-fetch').Client<AdminPaths>} AdminClient */
/** @typedef {{ url: string, token: string }} AdminSettings */

/** The admin API answered with an error: its Error body's `code` (branch on it, never on the message) and status. */
class AdminApiError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   * @param {string | undefined} code
   */
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * The address a gateway started in development wrote beside its admin token (ADMIN_TOKEN_FILE's folder,
 * .data/admin-url): the admin API of the `npm start` this CLI runs beside, whatever its ADMIN_PORT.
 * @param {NodeJS.ProcessEnv} env
 * @returns {string | undefined}
 */
function developmentAdminUrl(env) {
  try {
    const url = readFileSync(
      path.join(path.dirname(env.ADMIN_TOKEN_FILE || '.data/admin-token'), 'admin-url'),
      'utf8',
    ).trim();
    return /^https?:\/\/[^\s]+$/.test(url) ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @returns {AdminSettings}
 */
function adminSettings(env) {
  const url = (env.ADMIN_URL || developmentAdminUrl(env) || `http://127.0.0.1:${env.ADMIN_PORT || 3002}`).replace(
    /\/+$/,
    '',
  );
  let token = env.ADMIN_TOKEN;
  if (!token) {
    const file = env.ADMIN_TOKEN_FILE || '.data/admin-token';
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch {
      throw new Error(
        `no admin token: set ADMIN_TOKEN (or start the gateway in development once, which writes ${file})`,
      );
    }
  }
  return { url, token };
}

/**
 * @param {string} text
 * @returns {any}
 */
function parseJson(text) {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The client of one admin API. Its middleware gives every call the CLI's rules: the token, a deadline for the
 * whole call (`timeoutMs`), an unreachable API said plainly, and an error answer thrown as an AdminApiError with
 * the API's own message, so a call that returns has answered 2xx.
 * @param {AdminSettings} admin
 * @param {number} [timeoutMs]
 * @returns {AdminClient}
 */
function adminClient(admin, timeoutMs = 30_000) {
  /** @type {AdminClient} */
  const client = createClient({ baseUrl: admin.url, headers: { authorization: `Bearer ${admin.token}` } });
  client.use({
    onRequest: ({ request }) => new Request(request, { signal: AbortSignal.timeout(timeoutMs) }),
    onError: ({ error }) => {
      const reason = /** @type {{ cause?: { code?: string }, message?: string }} */ (error);
      return new Error(
        `cannot reach the admin API at ${admin.url} (${reason.cause?.code ?? reason.message}): is the gateway running? (ADMIN_URL, or the address a development gateway writes to .data/admin-url)`,
        { cause: error },
      );
    },
    onResponse: async ({ request, response }) => {
      if (response.ok) return undefined;
      const body = parseJson(await response.text());
      const url = new URL(request.url);
      throw new AdminApiError(
        body?.message ?? `${request.method} ${url.pathname}${url.search} answered ${response.status}`,
        response.status,
        typeof body?.code === 'string' ? body.code : undefined,
      );
    },
  });
  return client;
}

/**
 * The data of a call that answered 2xx (the middleware threw on anything else).
 * @template T
 * @param {Promise<{ data?: T }>} call
 * @returns {Promise<T>}
 */
async function answer(call) {
  return /** @type {T} */ ((await call).data);
}

module.exports = { AdminApiError, adminSettings, adminClient, answer };
