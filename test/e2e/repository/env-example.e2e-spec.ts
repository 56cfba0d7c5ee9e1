import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConsoleEnvironment } from '../../../apps/console/src/config/console.config';
import { GatewayEnvironment } from '../../../apps/gateway/src/config/gateway.config';
import { PetsEnvironment } from '../../../apps/pets/src/config/pets.config';
import { PortalEnvironment } from '../../../apps/portal/src/config/portal.config';

const ROOT = join(__dirname, '../../..');

/**
 * What the apps read: each app's environment class names every variable it reads, and its initialisers are the
 * defaults (loadEnvironment reads exactly `Object.keys(new Schema())`). Tracing reads OpenTelemetry's standard
 * variables itself, before anything loads (libs/platform/src/tracing).
 */
function variablesTheAppsRead(): Map<string, unknown> {
  const read = new Map<string, unknown>();
  for (const schema of [PetsEnvironment, GatewayEnvironment, PortalEnvironment, ConsoleEnvironment]) {
    for (const [name, fallback] of Object.entries(new (schema as new () => object)())) {
      if (read.has(name) && read.get(name) !== fallback) throw new Error(`${name}: two apps, two defaults`);
      read.set(name, fallback);
    }
  }
  const tracing = join(ROOT, 'libs/platform/src/tracing');
  for (const file of readdirSync(tracing).filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))) {
    for (const [name] of readFileSync(join(tracing, file), 'utf8').matchAll(/\bOTEL_[A-Z_]+/g))
      read.set(name, undefined);
  }
  return read;
}

/** `NAME=value` (set by default) or `# NAME=...` (unset by default) lines of .env.example. */
function example(): Map<string, { value: string; commented: boolean }> {
  const lines = new Map<string, { value: string; commented: boolean }>();
  for (const line of readFileSync(join(ROOT, '.env.example'), 'utf8').split('\n')) {
    const entry = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!entry) continue;
    if (lines.has(entry[2])) throw new Error(`.env.example lists ${entry[2]} twice`);
    lines.set(entry[2], { value: entry[3], commented: !!entry[1] });
  }
  return lines;
}

describe('.env.example', () => {
  const read = variablesTheAppsRead();
  const listed = example();

  it('lists every variable the apps read, and no other', () => {
    expect([...listed.keys()].filter((name) => !read.has(name)).sort()).toEqual([]);
    expect([...read.keys()].filter((name) => !listed.has(name)).sort()).toEqual([]);
  });

  it("gives each variable the apps' own default: set when there is one, commented out when it is unset", () => {
    const wrong = [...read].flatMap(([name, fallback]) => {
      const line = listed.get(name);
      if (!line) return [];
      if (fallback === undefined) return line.commented ? [] : [`${name} has no default: list it as # ${name}=`];
      return !line.commented && line.value === String(fallback) ? [] : [`${name}=${String(fallback)} is the default`];
    });
    expect(wrong).toEqual([]);
  });
});
