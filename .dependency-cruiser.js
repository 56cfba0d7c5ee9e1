/**
 * The folder tree is the architecture (npm run lint:architecture, in CI). Each app's folders stand in layers,
 * lowest first: a folder imports only folders below it, so no two folders import each other (no loop), and the
 * composition root (the files directly under src/ that no layer names: main.ts, the app module, create-*-app.ts)
 * sits above them all. A layer entry may name a sub-folder ('consumers/admin'): it then stands in its own layer,
 * and its parent's rule covers the parent's other files only. Apps never import each other; libs never import apps.
 */

/**
 * The gateway (docs/architecture.md). The control plane's rooms: access (admin tokens, scopes, the admin context,
 * audit) below consumers (the aggregate and its change channel), below keys (the data plane's lookup and cache) and
 * plan-requests; client-bindings (OAuth clients bound to consumers) beside keys, and tokens (the data plane's
 * access tokens) above both. The billing period's arithmetic (periods/: a consumer's periods, a monthly quota's window) stands
 * low: consumers, credits, the limits and billing all cut periods. The credit engine (credits/) stands below the
 * limits that spend it, and billing (the anchor, the quota, the credits' admin routes) above them; usage-export (the
 * history read as billing events) above usage. Threshold events (alerts/) stand between the credits and the limits,
 * whose guard observes every decision. Each room's admin
 * controllers and DTOs (<room>/admin/) stand above every room and below the admin app's shell (admin/); the
 * conventions they share (admin-conventions/: error examples, tags, page size) stand low, below every room that
 * has an admin/ folder. consumers/admin (with the :name parameters) stands below the admin folders that take them.
 * A top-level folder as a whole, its admin/ included, never imports one that imports it: scripts/folder-cycles.js.
 */
const GATEWAY_LAYERS = [
  ['config', 'clock.ts', 'nest-internals.ts'],
  ['plans', 'redis', 'periods', 'admin-conventions'],
  ['database'],
  ['access'],
  ['consumers'],
  ['routing', 'keys', 'plan-requests', 'credits', 'client-bindings'],
  ['alerts', 'tokens'],
  ['rate-limit', 'usage', 'sso'],
  ['billing', 'auth', 'usage-export', 'webhooks'],
  ['access/admin', 'consumers/admin', 'plan-requests/admin'],
  ['usage/admin', 'billing/admin', 'webhooks/admin', 'client-bindings/admin', 'sso/admin'],
  ['pipeline', 'proxy', 'health', 'admin'],
  ['docs'],
];

/** The developer portal. PortalApi (admin-api/, the portal's one way to the admin API) stands below both accounts
 * (the first consumer, made at verification) and dashboard; the dashboard imports the accounts' guard
 * (accounts/signed-in.guard.ts), so accounts sits below dashboard. */
const PORTAL_LAYERS = [
  ['config', 'credentials'],
  ['throttle'],
  ['admin-api'],
  ['accounts'],
  ['dashboard', 'webhooks'],
  ['database', 'reference'],
];

/** The operator console: one folder per page family over the sign-in, the actions and the sections helpers. */
const CONSOLE_LAYERS = [
  ['config', 'auth', 'actions.ts', 'sections.ts'],
  ['console.views.ts'],
  ['audit'],
  ['overview', 'consumers', 'plan-requests', 'tokens', 'webhooks'],
];

function layerRules(app, layers, sharedLayers = new Set()) {
  const src = `^apps/${app}/src/`;
  const all = layers.flat();
  const folder = (name) => {
    if (name.endsWith('.ts')) return `${src}${name.replace('.', '[.]')}$`;
    const children = all.filter((other) => other.startsWith(`${name}/`)).map((other) => other.slice(name.length + 1));
    return `${src}${name}/${children.length ? `(?!(${children.join('|')})/)` : ''}`;
  };
  const layered = all.filter((name) => name.endsWith('.ts')).map((name) => name.replace('.', '[.]'));
  const root = `${src}(?!(${layered.join('|') || '$^'})$)[^/]+[.]ts$`;
  return layers.flatMap((layer, index) => {
    const higher = layers.slice(index + 1).flat();
    const siblings = (own) => (sharedLayers.has(index) ? [] : layer.filter((name) => name !== own));
    return layer.map((name) => ({
      name: `${app}-${name.replace('.ts', '').replace('/', '-')}-imports-only-lower-layers`,
      comment: `apps/${app}/src/${name} stands in layer ${index + 1}: it may import ${layers.slice(0, index).flat().join(', ') || `nothing of the ${app}`} (and itself), not ${[...siblings(name), ...higher].join(', ') || 'anything above it'} nor the composition root.`,
      severity: 'error',
      from: { path: folder(name) },
      to: { path: [...siblings(name), ...higher].map(folder).concat([root]) },
    }));
  });
}

const appsNeverImportEachOther = ['gateway', 'pets', 'portal', 'console'].map((app) => ({
  name: `apps-never-import-each-other-${app}`,
  severity: 'error',
  from: { path: `^apps/${app}/` },
  to: { path: `^apps/(?!${app}/)` },
}));

const SRC = '^apps/gateway/src/';

module.exports = {
  forbidden: [
    ...layerRules('gateway', GATEWAY_LAYERS),
    ...layerRules('portal', PORTAL_LAYERS),
    ...layerRules('console', CONSOLE_LAYERS),
    ...appsNeverImportEachOther,
    { name: 'libs-never-import-apps', severity: 'error', from: { path: '^libs/' }, to: { path: '^apps/' } },
    {
      name: 'gateway-no-async-hooks',
      comment:
        "No async_hooks in the gateway's own code: an AsyncLocalStorage's first run() turns async hooks on for the " +
        'whole process, for good, and every /v1 request pays for them (2-3 % of its CPU). Pass context explicitly ' +
        '(AdminRequestContext). Tracing (libs/platform) is opt-in and documented as costing CPU.',
      severity: 'error',
      from: { path: SRC },
      to: { dependencyTypes: ['core'], path: '^(node:)?async_hooks$' },
    },
    {
      name: 'no-file-cycles',
      comment:
        'No two files of the apps or libs import each other, directly or through others (type-only imports aside).',
      severity: 'error',
      from: { path: '^(apps|libs)/' },
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(\\.spec\\.ts$|/generated/)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
