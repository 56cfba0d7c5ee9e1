/**
 * The folder tree is the architecture (npm run lint:architecture, in CI). The gateway's feature folders stand in
 * layers, lowest first: a folder imports only folders below it, so no two folders import each other (no loop),
 * and the composition root (main.ts, gateway-app.module.ts, create-gateway-app.ts) sits above them all.
 * Apps never import each other; libs never import apps.
 */
const GATEWAY_LAYERS = [
  ['config', 'clock.ts', 'nest-internals.ts'],
  ['plans', 'redis'],
  ['routing'],
  ['database'],
  ['consumers'],
  ['billing'],
  ['rate-limit', 'usage'],
  ['auth'],
  ['pipeline', 'proxy', 'health', 'admin'],
  ['docs'],
];

const SRC = '^apps/gateway/src/';
const folder = (name) => (name.endsWith('.ts') ? `${SRC}${name.replace('.', '[.]')}$` : `${SRC}${name}/`);

const layerRules = GATEWAY_LAYERS.flatMap((layer, index) => {
  const higher = GATEWAY_LAYERS.slice(index + 1).flat();
  const siblings = (own) => layer.filter((name) => name !== own);
  return layer.map((name) => ({
    name: `gateway-${name.replace('.ts', '')}-imports-only-lower-layers`,
    comment: `apps/gateway/src/${name} stands in layer ${index + 1}: it may import ${GATEWAY_LAYERS.slice(0, index).flat().join(', ') || 'nothing of the gateway'} (and itself), not ${[...siblings(name), ...higher].join(', ') || 'anything above it'} nor the composition root.`,
    severity: 'error',
    from: { path: folder(name) },
    to: {
      path: [...siblings(name), ...higher]
        .map(folder)
        .concat([`${SRC}(main|gateway-app[.]module|create-gateway-app)[.]ts$`]),
    },
  }));
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'apps-never-import-each-other-gateway',
      severity: 'error',
      from: { path: '^apps/gateway/' },
      to: { path: '^apps/(?!gateway/)' },
    },
    {
      name: 'apps-never-import-each-other-pets',
      severity: 'error',
      from: { path: '^apps/pets/' },
      to: { path: '^apps/(?!pets/)' },
    },
    {
      name: 'apps-never-import-each-other-console',
      severity: 'error',
      from: { path: '^apps/console/' },
      to: { path: '^apps/(?!console/)' },
    },
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
