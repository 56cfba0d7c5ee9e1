import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildAppsIfMissing,
  dropDatabasesLeftBy,
  exitWithin,
  freeStackPorts,
  hasNginx,
  killLeftovers,
  leftoverProcesses,
  runStackCli,
  StackRun,
} from '../support/stack';
import { runIf } from '../support/skip';

const ROOT = join(__dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain Node (scripts/), no types of its own
const { DEFAULTS } = require('../../scripts/stack/settings') as { DEFAULTS: { STACK_PORT: number } };

/**
 * What a newcomer needs and sees with `npm run stack` (issue #48.9): the README says what it needs where the scripts
 * are listed, its default port is not the one docker-compose publishes (both can run at once), and its terminal
 * reads as `npm start`'s (scripts/start-output.js): `<app> | HH:MM:SS <level> <message>`, no JSON, and one line per
 * request, the gateway's, so a client's 404 from the pets service is one warn line, not two.
 */
describe('npm run stack, for a newcomer', () => {
  it('says in the README what it needs, and listens by default where docker-compose does not', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const scripts = readme.slice(readme.indexOf('## Other scripts'), readme.indexOf('**Docker**'));
    const stackMention = scripts.slice(scripts.indexOf('`npm run stack`'));
    expect(stackMention.slice(0, 400)).toMatch(/nginx, PostgreSQL and Redis/);

    const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
    const published = Number(/"\$\{BALANCER_PORT:-(\d+)\}:\d+"/.exec(compose)![1]);
    expect(published).toBe(8080);
    expect(DEFAULTS.STACK_PORT).not.toBe(published);
    // docs/stack.md's table says the default the code has.
    const stackDoc = readFileSync(join(ROOT, 'docs/stack.md'), 'utf8');
    expect(stackDoc).toContain(`| \`STACK_PORT\` | \`${DEFAULTS.STACK_PORT}\` |`);
    // Nothing else the repository starts listens there by default (compose, its balancer, npm start).
    for (const file of ['docker-compose.yml', 'gateway/nginx.conf', 'scripts/start.js'])
      expect([file, readFileSync(join(ROOT, file), 'utf8').includes(String(DEFAULTS.STACK_PORT))]).toEqual([
        file,
        false,
      ]);
  });

  const ifNginxAndRedis = runIf(hasNginx && process.env.REDIS_URL, 'nginx on PATH and REDIS_URL (a Redis server)');
  ifNginxAndRedis.describe('its terminal', () => {
    let run: StackRun | undefined;
    beforeAll(() => buildAppsIfMissing(), 120_000);
    afterAll(async () => {
      if (!run) return;
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
      killLeftovers(run);
      await dropDatabasesLeftBy(run);
    });

    it('prints the apps as npm start does: human lines, no JSON, a client 404 once', async () => {
      const ports = await freeStackPorts(2);
      run = runStackCli({ ...ports.env, GATEWAY_INSTANCES: '2', LOG_LEVEL: '' });
      await run.waitFor(/Ctrl-C stops everything/, 120_000);
      const key = /Free-plan key for this stack: (\S+)/.exec(run.output())![1];
      const before = run.output().length;

      const auth = { authorization: `Bearer ${key}` };
      // A 404 of the pets service, passed on by a gateway; a 404 of the gateway's own; a 401.
      expect((await fetch(`http://127.0.0.1:${ports.nginx}/v1/pets/999999`, { headers: auth })).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${ports.nginx}/v1/nope`, { headers: auth })).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${ports.nginx}/v1/pets`)).status).toBe(401);
      await run.waitFor(/ warn +GET \/v1\/pets 401$/m, 10_000);
      await sleep(500);

      const lines = run.output().slice(before).split('\n').filter(Boolean);
      expect(lines.filter((line) => line.includes('/pets/:petId'))).toEqual([
        expect.stringMatching(/^gateway-[12] +\| \d\d:\d\d:\d\d warn +GET \/v1\/pets\/:petId 404$/),
      ]);
      expect(lines.filter((line) => line.includes('GET unmatched 404'))).toEqual([
        expect.stringMatching(/^gateway-[12] +\| \d\d:\d\d:\d\d warn +GET unmatched 404$/),
      ]);
      // The whole run: every app's line in the one format, names in one column, no JSON line anywhere.
      const all = run.output().split('\n');
      expect(all.filter((line) => line.includes('{"level"'))).toEqual([]);
      const appLines = all.filter((line) => /^(pets|gateway-\d+|portal|nginx) +\| /.test(line));
      expect(appLines.length).toBeGreaterThan(0);
      expect(appLines.filter((line) => line.indexOf('|') !== 11)).toEqual([]);

      run.child.kill('SIGTERM');
      expect((await exitWithin(run, 30_000)).code).toBe(0);
      expect(leftoverProcesses(run)).toEqual([]);
    }, 240_000);
  });
});
