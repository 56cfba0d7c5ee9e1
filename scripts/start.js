#!/usr/bin/env node
/**
 * `npm start`: builds (with --build, unless the last successful build was made from the same sources), then runs
 * the built apps side by side (the pets service first, then the gateway, then the developer portal once the gateway
 * answers, with a development admin token made for it) on their embedded defaults, and stops everything when either
 * app exits or on SIGINT / SIGTERM. It prints one line per phase (building, database, starting), each app's log
 * lines in one human format (scripts/start-output.js; the apps write JSON), and a closing Ready block with every
 * address and the demo key once every app answers its readiness.
 * `node scripts/start.js pets` or `... gateway` runs one of them.
 *
 * Signals: npm runs a script under `sh -c`, which does not pass signals on, so package.json `exec`s this script:
 * a SIGTERM sent to npm reaches npm, then this process, which stops the build or the apps and exits when they have.
 * A signal sent to one app stops it, and its exit stops the other.
 *
 * Without DATABASE_URL and GATEWAY_DATABASE_URL, one embedded PGlite (PGLITE_DATA_DIR, .data/pglite), hosted here
 * and served over the wire protocol, holds both apps' tables (the gateway's in its own schema): one database
 * engine in memory, not one per app.
 *
 * START_IDENTITY_PROVIDER=1 also starts a stand-in identity provider (scripts/identity-provider.js, on IDP_PORT, 3005)
 * before the gateway, gives the gateway its issuer (OAUTH_ISSUERS, with its tokenUrl for Swagger UI's Authorize),
 * and binds its demo client to the "demo" consumer (made if missing): docs/oauth.md, "Try it with npm start". Its demo
 * people sign in to the console (CONSOLE_OIDC_*, and the gateway's ADMIN_OIDC_* with DEMO_ROLES) and the portal
 * (PORTAL_OIDC_PROVIDERS, the demo developers' domain required), unless those are configured already: docs/sso.md.
 */
// First: on a Node older than the supported one, one line and exit 1 (the apps' own check, before any build).
require('./supported-node').exitOnUnsupportedNode();

const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { appNodeOptions } = require('./app-node-options');
const { buildInputsFingerprint, buildIsCurrent, recordBuild } = require('./build-inputs');
const { AppOutput, phase, readyBlock } = require('./start-output');
const { addExampleAnimalIfEmpty } = require('./example-animal');
const {
  DEFAULT_AUDIENCE,
  DEFAULT_PORT: DEFAULT_IDP_PORT,
  DEMO_DEVELOPER_DOMAIN,
  DEMO_PEOPLE,
  DEMO_ROLES,
} = require('./identity-provider');

const ROOT = path.join(__dirname, '..');
const ENTRY = {
  pets: path.join(ROOT, 'dist/apps/pets/apps/pets/src/main.js'),
  gateway: path.join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js'),
  portal: path.join(ROOT, 'dist/apps/portal/apps/portal/src/main.js'),
  console: path.join(ROOT, 'dist/apps/console/apps/console/src/main.js'),
};

const args = process.argv.slice(2);
const build = args.includes('--build');
const wanted = args.filter((arg) => arg !== '--build');
for (const name of wanted) {
  if (!ENTRY[name]) {
    console.error(`Unknown app "${name}": expected one of ${Object.keys(ENTRY).join(', ')}`);
    process.exit(2);
  }
}

function appEnvironment(databaseEnv, name) {
  const env = { ...process.env, ...databaseEnv, NODE_OPTIONS: appNodeOptions() };
  // The developer portal: its tables (schema portal) in the same database, the admin API with a token of its own.
  if (name === 'portal') {
    env.PORTAL_DATABASE_URL = process.env.PORTAL_DATABASE_URL || env.GATEWAY_DATABASE_URL || env.DATABASE_URL;
    env.ADMIN_URL = adminUrl();
    env.PORTAL_PUBLIC_URL = process.env.PORTAL_PUBLIC_URL || `http://localhost:${portalPort()}`;
    env.PORTAL_API_URL = process.env.PORTAL_API_URL || `http://localhost:${process.env.PORT || 3000}/v1`;
    // The stand-in provider's "Sign in with", beside any provider the developer configured.
    if (identityProvider?.portal) {
      const configured = process.env.PORTAL_OIDC_PROVIDERS ? JSON.parse(process.env.PORTAL_OIDC_PROVIDERS) : [];
      const { id, name, clientId, secret } = identityProvider.portal;
      env.PORTAL_OIDC_PROVIDERS = JSON.stringify([
        ...configured,
        {
          id,
          name,
          issuer: identityProvider.issuer,
          clientId,
          clientSecret: secret,
          requiredDomains: [DEMO_DEVELOPER_DOMAIN],
        },
      ]);
    }
  }
  // The portal's API reference calls the gateway from the portal's origin (another port): CORS lets it.
  // The in-process counters (no Redis) survive a restart: written at shutdown, read at start.
  if (name === 'gateway' && !process.env.REDIS_URL && process.env.RATE_LIMIT_STATE_FILE === undefined)
    env.RATE_LIMIT_STATE_FILE = '.data/rate-limits.json';
  if (name === 'gateway' && !process.env.CORS_ORIGINS && wantsPortal)
    env.CORS_ORIGINS = `http://localhost:${portalPort()},http://127.0.0.1:${portalPort()}`;
  // The stand-in identity provider's issuer, beside any the developer configured.
  if (name === 'gateway' && identityProvider) {
    const configured = process.env.OAUTH_ISSUERS ? JSON.parse(process.env.OAUTH_ISSUERS) : [];
    env.OAUTH_ISSUERS = JSON.stringify([
      ...configured,
      {
        issuer: identityProvider.issuer,
        audience: identityProvider.audience,
        tokenUrl: `${identityProvider.issuer}/token`,
      },
    ]);
  }
  // The console's sign-in: the gateway takes the provider's ID tokens for the console's client, roles mapped.
  if (name === 'gateway' && identityProvider?.console) {
    env.ADMIN_OIDC_ISSUER = identityProvider.issuer;
    env.ADMIN_OIDC_AUDIENCE = identityProvider.console.clientId;
    env.ADMIN_OIDC_ROLES = JSON.stringify(DEMO_ROLES);
  }
  // The operator console keeps its sessions in the same database (schema console) and calls the admin API.
  if (name === 'console') {
    env.CONSOLE_DATABASE_URL = process.env.CONSOLE_DATABASE_URL || env.GATEWAY_DATABASE_URL || env.DATABASE_URL;
    env.ADMIN_URL = process.env.ADMIN_URL || `http://127.0.0.1:${process.env.ADMIN_PORT || 3002}`;
    if (identityProvider?.console) {
      env.CONSOLE_OIDC_ISSUER = identityProvider.issuer;
      env.CONSOLE_OIDC_CLIENT_ID = identityProvider.console.clientId;
      env.CONSOLE_OIDC_CLIENT_SECRET = identityProvider.console.secret;
      env.CONSOLE_OIDC_NAME = identityProvider.console.name;
    }
  }
  return env;
}

let wantsPortal = false;
/** START_IDENTITY_PROVIDER's provider, once started: its issuer, audience, demo client and where its secret is kept. */
let identityProvider;
const portalPort = () => process.env.PORTAL_PORT || 3003;
const adminUrl = () => process.env.ADMIN_URL || `http://127.0.0.1:${process.env.ADMIN_PORT || 3002}`;

/**
 * The portal's admin token (PORTAL_ADMIN_TOKEN, else the development one kept in .data/portal-token, made through the
 * admin API with the development root token the gateway wrote, with the `--for portal` preset of npm run keys).
 */
async function portalToken() {
  if (process.env.PORTAL_ADMIN_TOKEN) return process.env.PORTAL_ADMIN_TOKEN;
  const rootFile = process.env.ADMIN_TOKEN_FILE || '.data/admin-token';
  const file = path.join(path.dirname(rootFile), 'portal-token');
  const call = (token, route) =>
    fetch(`${adminUrl()}${route}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: globalThis.AbortSignal.timeout(5000),
    });
  // Kept while it still does the preset's job: a token minted before a scope or actsForUsers joined it is replaced.
  const { TOKEN_PRESETS } = require('./keys.js');
  const works = (token) =>
    call(token, '/token')
      .then(async (r) => {
        if (!r.ok) return false;
        const record = await r.json();
        return (
          record.actsForUsers === true && TOKEN_PRESETS.portal.scopes.every((scope) => record.scopes.includes(scope))
        );
      })
      .catch(() => false);
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (await works(kept)) return kept;
  }
  const root = process.env.ADMIN_TOKEN || readFileSync(rootFile, 'utf8').trim();
  const reply = await fetch(`${adminUrl()}/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'portal', ...TOKEN_PRESETS.portal }),
  });
  if (!reply.ok) throw new Error(`cannot create the portal's admin token: ${reply.status} ${await reply.text()}`);
  const { token } = await reply.json();
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/**
 * The console's CONSOLE_AUDIT_TOKEN (set: used as is; else the development one kept in .data/console-audit-token,
 * made with the development root token): it reports failed sign-ins and lockouts to the admin audit. It can read
 * nothing (consumers:read on the consumers it created: none) and names people (actsForUsers): docs/console.md.
 */
async function consoleAuditToken() {
  if (process.env.CONSOLE_AUDIT_TOKEN) return process.env.CONSOLE_AUDIT_TOKEN;
  const rootFile = process.env.ADMIN_TOKEN_FILE || '.data/admin-token';
  const file = path.join(path.dirname(rootFile), 'console-audit-token');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    const record = await fetch(`${adminUrl()}/token`, {
      headers: { authorization: `Bearer ${kept}` },
      signal: globalThis.AbortSignal.timeout(5000),
    })
      .then((r) => (r.ok ? r.json() : undefined))
      .catch(() => undefined);
    if (record?.actsForUsers === true) return kept;
  }
  const root = process.env.ADMIN_TOKEN || readFileSync(rootFile, 'utf8').trim();
  const reply = await fetch(`${adminUrl()}/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'console-audit',
      scopes: ['consumers:read'],
      ownConsumersOnly: true,
      actsForUsers: true,
    }),
  });
  if (!reply.ok) throw new Error(`cannot create the console's audit token: ${reply.status} ${await reply.text()}`);
  const { token } = await reply.json();
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** The demo client's secret: IDP_CLIENT_SECRET, else one made once and kept beside the admin token (.data/). */
function identityProviderSecret() {
  if (process.env.IDP_CLIENT_SECRET) return { secret: process.env.IDP_CLIENT_SECRET, file: undefined };
  const file = keptSecretFile('idp-client-secret');
  return { secret: keptSecret(file), file };
}

/** A file beside the admin token (.data/). */
const keptSecretFile = (name) => path.join(path.dirname(process.env.ADMIN_TOKEN_FILE || '.data/admin-token'), name);

/** The secret kept in `file`, made there on first use. */
function keptSecret(file) {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(path.dirname(file), { recursive: true });
  const secret = randomBytes(24).toString('hex');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** The name on the console's and the portal's "Sign in with" button. */
const DEMO_PROVIDER_NAME = 'Demo SSO';

/**
 * The console's and the portal's clients at the stand-in provider, for the apps started here: each only when the
 * developer has not configured a sign-in of their own (CONSOLE_OIDC_ISSUER or ADMIN_OIDC_ISSUER; a provider with the
 * same id in PORTAL_OIDC_PROVIDERS). Their secrets are kept in .data/ as the demo client's is.
 */
function signInClients(names) {
  const clients = {};
  if (names.includes('console') && !process.env.CONSOLE_OIDC_ISSUER && !process.env.ADMIN_OIDC_ISSUER) {
    const host = process.env.CONSOLE_HOST && !['0.0.0.0', '::'].includes(process.env.CONSOLE_HOST);
    const port = process.env.CONSOLE_PORT || 3004;
    // The addresses the browser may use: the console answers loopback names by default (CONSOLE_ALLOWED_HOSTS).
    const urls = process.env.CONSOLE_PUBLIC_URL
      ? [process.env.CONSOLE_PUBLIC_URL]
      : host
        ? [`http://${process.env.CONSOLE_HOST}:${port}`]
        : [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
    clients.console = {
      clientId: 'petstore-console',
      secret: keptSecret(keptSecretFile('idp-console-secret')),
      name: DEMO_PROVIDER_NAME,
      urls,
    };
  }
  const configured = process.env.PORTAL_OIDC_PROVIDERS ? JSON.parse(process.env.PORTAL_OIDC_PROVIDERS) : [];
  if (names.includes('portal') && !configured.some((provider) => provider.id === 'demo')) {
    const portal = `${process.env.PORTAL_PUBLIC_URL || `http://localhost:${portalPort()}`}${process.env.PORTAL_BASE_PATH || ''}`;
    clients.portal = {
      id: 'demo',
      clientId: 'petstore-portal',
      secret: keptSecret(keptSecretFile('idp-portal-secret')),
      name: DEMO_PROVIDER_NAME,
      redirectUri: `${portal}/login/oidc/demo/callback`,
    };
  }
  return clients;
}

/** Starts the stand-in identity provider and waits until it serves its discovery document. */
async function startIdentityProvider(names) {
  const port = process.env.IDP_PORT || DEFAULT_IDP_PORT;
  const issuer = `http://127.0.0.1:${port}`;
  const { secret, file } = identityProviderSecret();
  const gatewayPort = process.env.PORT || 3000;
  // Swagger UI's pages (the gateway's /docs, the portal's reference) ask it for tokens from the browser: CORS.
  const origins = [gatewayPort, portalPort()].flatMap((p) => [`http://localhost:${p}`, `http://127.0.0.1:${p}`]);
  identityProvider = {
    issuer,
    audience: process.env.IDP_AUDIENCE || DEFAULT_AUDIENCE,
    clientId: process.env.IDP_CLIENT_ID || 'demo-client',
    secretFile: file,
    ...signInClients(names),
  };
  const { console: consoleClient, portal: portalClient } = identityProvider;
  phase(`starting the identity provider on ${issuer} (START_IDENTITY_PROVIDER)`);
  const child = spawn(process.execPath, [path.join(__dirname, 'identity-provider.js')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      IDP_PORT: String(port),
      IDP_ISSUER: issuer,
      IDP_AUDIENCE: identityProvider.audience,
      IDP_CLIENT_ID: identityProvider.clientId,
      IDP_CLIENT_SECRET: secret,
      IDP_CORS_ORIGINS: process.env.IDP_CORS_ORIGINS || origins.join(','),
      IDP_CONSOLE_CLIENT_ID: consoleClient?.clientId ?? '',
      IDP_CONSOLE_CLIENT_SECRET: consoleClient?.secret ?? '',
      IDP_CONSOLE_URLS: consoleClient?.urls.join(',') ?? '',
      IDP_PORTAL_CLIENT_ID: portalClient?.clientId ?? '',
      IDP_PORTAL_CLIENT_SECRET: portalClient?.secret ?? '',
      IDP_PORTAL_REDIRECT_URIS: portalClient?.redirectUri ?? '',
    },
  });
  children.set('idp', child);
  output.follow('idp', child.stdout, process.stdout);
  output.follow('idp', child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    children.delete('idp');
    if (!stopping) {
      console.error(`idp exited (${signal ?? code}); stopping the others.`);
      stopAll(code || 1);
    }
  });
  while (!stopping) {
    const ok = await fetch(`${issuer}/.well-known/openid-configuration`, {
      signal: globalThis.AbortSignal.timeout(2000),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Binds the identity provider's demo client to the "demo" consumer through the admin API (the gateway mints "demo"
 * on a first start; made here, Free, when it is missing). Already bound: nothing to do.
 */
async function bindDemoClient() {
  const root =
    process.env.ADMIN_TOKEN || readFileSync(process.env.ADMIN_TOKEN_FILE || '.data/admin-token', 'utf8').trim();
  const call = (method, route, body) =>
    fetch(`${adminUrl()}${route}`, {
      method,
      headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: globalThis.AbortSignal.timeout(5000),
    });
  const demo = await call('GET', '/consumers/demo');
  if (demo.status === 404) {
    const created = await call('POST', '/consumers', { name: 'demo', plan: 'free' });
    if (!created.ok) throw new Error(`cannot create the demo consumer: ${created.status} ${await created.text()}`);
  } else if (!demo.ok) throw new Error(`cannot read the demo consumer: ${demo.status} ${await demo.text()}`);
  const bound = await call('POST', '/consumers/demo/client-bindings', {
    issuer: identityProvider.issuer,
    clientId: identityProvider.clientId,
  });
  if (!bound.ok && bound.status !== 409)
    throw new Error(`cannot bind the demo client: ${bound.status} ${await bound.text()}`);
}

const children = new Map();
let stopping = false;
let exitCode = 0;

/** Stops every child (the build's whole process group, or the apps) and exits once they have all gone. */
function stopAll(code) {
  exitCode = code;
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) {
    try {
      // The build runs in a process group of its own (npm, sh, nest, tsc): signal all of it.
      if (child.group) process.kill(-child.pid, 'SIGTERM');
      else child.kill('SIGTERM');
    } catch {
      /* already gone */
    }
  }
  // Past the apps' own grace period (SHUTDOWN_GRACE_MS, 10 s by default), force them.
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    exit(code || 1);
  }, 15_000).unref();
  const wait = () => (children.size === 0 ? exit(exitCode) : setTimeout(wait, 50));
  wait();
}

/** Both apps' embedded database, or undefined when servers are configured. */
let sharedDatabase;

async function startSharedDatabase() {
  if (process.env.DATABASE_URL || process.env.GATEWAY_DATABASE_URL) return {};
  const { startSharedPglite } = require(path.join(__dirname, 'shared-pglite.js'));
  const dataDir = process.env.PGLITE_DATA_DIR || '.data/pglite';
  phase(
    `database: embedded PGlite in ${dataDir}${dataDir.startsWith('memory://') || existsSync(dataDir) ? '' : ' (created on this first start)'}`,
  );
  sharedDatabase = await startSharedPglite(dataDir);
  return {
    DATABASE_URL: sharedDatabase.url,
    DB_MIGRATE_ON_START: 'true',
    DB_POOL_SIZE: '4',
    GATEWAY_DATABASE_URL: sharedDatabase.url,
  };
}

function exit(code) {
  if (!sharedDatabase) process.exit(code);
  sharedDatabase.close().finally(() => process.exit(code));
}

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

/** What the build writes (the stamp aside): a missing output means a build to run. */
const BUILD_OUTPUTS = [...Object.values(ENTRY), path.join(ROOT, 'libs/client/dist/index.js')];

/** `npm run build`, skipped when dist/ is current (FORCE_BUILD=true builds anyway). */
async function buildIfChanged() {
  const fingerprint = buildInputsFingerprint(ROOT);
  if (process.env.FORCE_BUILD !== 'true' && buildIsCurrent(ROOT, fingerprint, BUILD_OUTPUTS)) {
    phase(
      'build: dist/ is up to date with apps/, libs/ and the configuration, not rebuilt (FORCE_BUILD=true rebuilds)',
    );
    return;
  }
  await runBuild();
  if (stopping) return;
  // Fingerprinted before the build: a file edited while it ran makes the next start build again.
  recordBuild(ROOT, fingerprint);
}

/** The build script's steps (`a && b && ...` in package.json), run one by one so that each gets a progress line. */
function buildSteps() {
  const script = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.build;
  return script.split('&&').map((step) => step.trim());
}

async function runBuild() {
  const steps = buildSteps();
  const started = Date.now();
  for (const [index, step] of steps.entries()) {
    if (stopping) return;
    phase(`building ${index + 1}/${steps.length}: ${step} (${seconds(Date.now() - started)} so far)`);
    await runBuildStep(step);
  }
  if (!stopping) phase(`built in ${seconds(Date.now() - started)}`);
}

function runBuildStep(step) {
  return new Promise((resolve) => {
    // A process group of its own (sh, npm, nest, tsc): a signal stops all of it.
    // node_modules/.bin on the PATH, as npm gives a script (`node scripts/start.js --build` runs without npm).
    const PATH = [path.join(ROOT, 'node_modules/.bin'), process.env.PATH].join(path.delimiter);
    const child = spawn('sh', ['-c', step], {
      cwd: ROOT,
      stdio: 'inherit',
      detached: true,
      env: { ...process.env, PATH },
    });
    child.group = true;
    children.set('build', child);
    child.on('exit', (code, signal) => {
      children.delete('build');
      if (stopping) return;
      if (code !== 0) {
        console.error(`build failed at "${step}" (${signal ?? code})`);
        stopAll(1);
        return;
      }
      resolve();
    });
  });
}

const seconds = (ms) => `${Math.round(ms / 1000)} s`;

function readinessUrl(name) {
  const env = process.env;
  if (name === 'pets') return `http://127.0.0.1:${env.PETS_PORT || 3001}/health/ready`;
  if (name === 'portal') return `http://127.0.0.1:${portalPort()}/health/ready`;
  if (name === 'console') {
    // Asked by a loopback name: the console answers no other by default (CONSOLE_ALLOWED_HOSTS).
    const host =
      !env.CONSOLE_HOST || env.CONSOLE_HOST === '0.0.0.0' || env.CONSOLE_HOST === '::' ? '127.0.0.1' : env.CONSOLE_HOST;
    return `http://${host}:${env.CONSOLE_PORT || 3004}/health/ready`;
  }
  const host = !env.HOST || env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.PORT || 3000}/health/ready`;
}

async function waitUntilReady(names, { quiet = false } = {}) {
  for (const name of names) {
    while (!stopping) {
      const ok = await fetch(readinessUrl(name), { signal: globalThis.AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  if (stopping || quiet) return;
  // On the embedded database, an empty store gets one example animal before Ready (scripts/example-animal.js).
  if (sharedDatabase && names.includes('pets') && process.env.NODE_ENV !== 'production')
    await addExampleAnimalIfEmpty(
      `http://127.0.0.1:${process.env.PETS_PORT || 3001}`,
      process.env.INTERNAL_SECRET,
    ).catch((error) => console.error(`pets     | no example animal added: ${error.message}`));
  if (stopping) return;
  if (identityProvider && names.includes('gateway'))
    await bindDemoClient().catch((error) => console.error(`idp      | demo client not bound: ${error.message}`));
  if (stopping) return;
  output.ready();
  const port = process.env.PORT || 3000;
  const rows = [];
  if (names.includes('gateway')) {
    rows.push(['Swagger UI (try the API)', `http://localhost:${port}/docs`]);
    rows.push(['gateway (public API)', `http://localhost:${port}/v1`]);
    rows.push([
      'admin API (private)',
      `http://127.0.0.1:${process.env.ADMIN_PORT || 3002}/docs (token in ${process.env.ADMIN_TOKEN_FILE || '.data/admin-token'})`,
    ]);
  }
  if (names.includes('pets'))
    rows.push(['pets service (internal)', `http://127.0.0.1:${process.env.PETS_PORT || 3001}`]);
  if (names.includes('portal'))
    rows.push([
      'developer portal',
      `${process.env.PORTAL_PUBLIC_URL || `http://localhost:${portalPort()}`}${process.env.PORTAL_BASE_PATH || ''}/`,
    ]);
  if (names.includes('console'))
    rows.push([
      'operator console (private)',
      `http://${process.env.CONSOLE_HOST || '127.0.0.1'}:${process.env.CONSOLE_PORT || 3004}`,
    ]);
  if (names.includes('gateway')) {
    if (!process.env.REDIS_URL)
      rows.push([
        'rate-limit counters',
        `in-process, kept across restarts in ${process.env.RATE_LIMIT_STATE_FILE || '.data/rate-limits.json'}`,
      ]);
    const demoKeyFile = path.join(path.dirname(process.env.ADMIN_TOKEN_FILE || '.data/admin-token'), 'demo-api-key');
    if (output.demoKey)
      rows.push(['demo API key (Free plan)', `${output.demoKey} (shown once, kept in ${demoKeyFile})`]);
    else if (existsSync(demoKeyFile)) rows.push(['demo API key (Free plan)', `cat ${demoKeyFile}`]);
  }
  if (identityProvider) {
    const { issuer, clientId, secretFile } = identityProvider;
    const secret = secretFile ? `$(cat ${secretFile})` : '$IDP_CLIENT_SECRET';
    rows.push(['identity provider (OAuth)', `${issuer}, client ${clientId} bound to "demo"`]);
    rows.push(['an access token', `curl -s -u ${clientId}:${secret} -d grant_type=client_credentials ${issuer}/token`]);
    const signsIn = (where) => DEMO_PEOPLE.filter((person) => person.role.startsWith(`${where}:`));
    const who = (people) =>
      `${people.map((person) => `${person.login} (${person.role.replace(/^\w+: /, '')})`).join(', ')}; any password`;
    if (identityProvider.console && names.includes('console'))
      rows.push([`console: ${identityProvider.console.name}`, who(signsIn('console'))]);
    if (identityProvider.portal && names.includes('portal'))
      rows.push([`portal: ${identityProvider.portal.name}`, who(signsIn('portal'))]);
  }
  process.stdout.write(readyBlock(`Ready in ${seconds(Date.now() - startedAt)}`, rows));
}

const startedAt = Date.now();
const output = new AppOutput();

async function main() {
  if (build) await buildIfChanged();
  if (stopping) return;
  const names = wanted.length ? wanted : Object.keys(ENTRY).filter((name) => existsSync(ENTRY[name]));
  let databaseEnv;
  try {
    databaseEnv = await startSharedDatabase();
  } catch (error) {
    console.error(`Cannot start the embedded database: ${error.message}`);
    exit(1);
    return;
  }
  if (stopping) return;
  if (!sharedDatabase) phase('database: the servers at DATABASE_URL / GATEWAY_DATABASE_URL');
  wantsPortal = names.includes('portal');
  // A request through the gateway is its line alone, not the pets service's too (scripts/start-output.js).
  output.gatewayInFront = names.includes('gateway') && names.includes('pets');
  if (/^(1|true)$/.test(process.env.START_IDENTITY_PROVIDER || '') && names.includes('gateway')) {
    try {
      await startIdentityProvider(names);
    } catch (error) {
      console.error(`Cannot start the identity provider: ${error.message}`);
      stopAll(1);
      return;
    }
    if (stopping) return;
  }
  phase(`starting ${names.join(', ')} (each applies its pending migrations first)`);
  const spawnApp = (name, extraEnv = {}) => {
    const child = spawn(process.execPath, [ENTRY[name]], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...appEnvironment(databaseEnv, name), ...extraEnv },
    });
    children.set(name, child);
    output.follow(name, child.stdout, process.stdout);
    output.follow(name, child.stderr, process.stderr);
    child.on('exit', (code, signal) => {
      children.delete(name);
      if (!stopping) {
        console.error(`${name} exited (${signal ?? code}); stopping the others.`);
        stopAll(code || 1);
      }
    });
  };
  // With a gateway here, the portal and the console start once its admin API answers: each needs a token made there.
  const deferred = names.includes('gateway') ? ['portal', 'console'] : ['portal'];
  for (const name of names) if (!deferred.includes(name)) spawnApp(name);
  // Without a gateway here, the console started above: CONSOLE_AUDIT_TOKEN if set, else sign-ins in its log only.
  if (deferred.includes('console') && names.includes('console')) {
    await waitUntilReady(['gateway'], { quiet: true });
    if (stopping) return;
    let token;
    try {
      token = await consoleAuditToken();
    } catch (error) {
      // The console works without it: its sign-ins are then in its own log only.
      console.error(`console | sign-ins not audited: ${error.message}`);
    }
    spawnApp('console', token ? { CONSOLE_AUDIT_TOKEN: token } : {});
  }
  // The portal starts once the gateway's admin API answers: it needs a token made there.
  if (wantsPortal) {
    await waitUntilReady(
      names.filter((name) => name === 'gateway'),
      { quiet: true },
    );
    if (stopping) return;
    try {
      spawnApp('portal', { PORTAL_ADMIN_TOKEN: await portalToken() });
    } catch (error) {
      console.error(`portal  | not started: ${error.message}`);
      stopAll(1);
      return;
    }
  }
  await waitUntilReady(names);
}

main().catch((error) => {
  console.error(error);
  stopAll(1);
});
