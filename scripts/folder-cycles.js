/**
 * Fails when an app's top-level folders import each other, directly or round a loop (npm run lint:architecture).
 *
 * Why a script: .dependency-cruiser.js lets a sub-folder stand in its own layer ('consumers/admin' above every room),
 * so its layer rules pass while consumers and rate-limit import each other through consumers/admin/. And
 * dependency-cruiser's folder-scope rules cannot collapse to the top level: a folder's imports are counted by the
 * imported file's own folder (consumers/admin, not consumers), so a loop through a sub-folder goes unseen (tried:
 * access/admin importing admin/shared/ while admin/ imports access was no loop to it). Here every file
 * of apps/<app>/src counts for its top-level folder (a file directly under src/ is its own room), and the strongly
 * connected components of that graph are the loops. Type-only imports aside, as in no-file-cycles: they vanish
 * from the build.
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
/** The package exports no path to its command, so it is found where npm puts it. */
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const APP_FILE = /^apps\/([^/]+)\/src\/([^/]+)/;

/** The top-level room a file stands in ('gateway:billing', 'gateway:clock.ts'), or undefined outside apps/. */
function roomOf(file) {
  const match = APP_FILE.exec(file);
  return match ? `${match[1]}:${match[2]}` : undefined;
}

/** Room => room => the imports (file => file) that make the arrow, from dependency-cruiser's modules. */
function roomGraph(modules) {
  const graph = new Map();
  for (const module of modules) {
    const from = roomOf(module.source);
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    for (const dependency of module.dependencies) {
      const to = roomOf(dependency.resolved);
      if (!to || to === from || dependency.dependencyTypes.includes('type-only')) continue;
      const arrows = graph.get(from);
      if (!arrows.has(to)) arrows.set(to, []);
      arrows.get(to).push(`${module.source} => ${dependency.resolved}`);
      if (!graph.has(to)) graph.set(to, new Map());
    }
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one room: each is a loop (or several sharing rooms). */
function loops(graph) {
  const index = new Map();
  const lowest = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (room) => {
    index.set(room, index.size);
    lowest.set(room, index.get(room));
    stack.push(room);
    onStack.add(room);
    for (const next of graph.get(room).keys()) {
      if (!index.has(next)) {
        visit(next);
        lowest.set(room, Math.min(lowest.get(room), lowest.get(next)));
      } else if (onStack.has(next)) {
        lowest.set(room, Math.min(lowest.get(room), index.get(next)));
      }
    }
    if (lowest.get(room) !== index.get(room)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== room);
    if (component.length > 1) found.push(component.sort());
  };
  for (const room of [...graph.keys()].sort()) if (!index.has(room)) visit(room);
  return found;
}

function main() {
  const json = execFileSync(
    process.execPath,
    [DEPCRUISE, 'apps', '--config', '.dependency-cruiser.js', '--output-type', 'json'],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  const graph = roomGraph(JSON.parse(json).modules);
  const found = loops(graph);
  if (found.length === 0) {
    console.log(`✔ no loop between the apps' top-level folders (${graph.size} folders and root files)`);
    return;
  }
  for (const component of found) {
    const members = new Set(component);
    console.error(`✘ these top-level folders import each other: ${component.join(', ')}`);
    for (const from of component) {
      for (const [to, imports] of graph.get(from)) {
        if (!members.has(to)) continue;
        console.error(`  ${from} -> ${to}`);
        for (const line of imports) console.error(`    ${line}`);
      }
    }
  }
  console.error(
    '\nEach room imports only rooms below it (.dependency-cruiser.js, docs/architecture.md): move the file that points ' +
      'up to where its imports live, or the concept two rooms share to a room below both.',
  );
  process.exitCode = 1;
}

main();
