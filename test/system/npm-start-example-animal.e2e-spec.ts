import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port';

const ROOT = join(__dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `node scripts/start.js pets` (what npm start runs, the pets service alone) on an embedded database in `dataDir`. */
async function startPets(dataDir: string, port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start.js'), 'pets'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PETS_PORT: String(port),
      PETS_METRICS_PORT: '0',
      PGLITE_DATA_DIR: dataDir,
      DATABASE_URL: '',
      GATEWAY_DATABASE_URL: '',
      INTERNAL_SECRET: '',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 120_000;
  while (!/^Ready in \d+ s:$/m.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no Ready block:\n${output}`);
    await sleep(200);
  }
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * A fresh `npm start` on its embedded database has one example animal by the time it says Ready, so the README's
 * first `GET /v1/pets` and Swagger UI's listPets show what an animal looks like (issue #48.10); a store that has
 * animals gets none added (a restart adds no second one).
 */
describe('npm start’s example animal', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-example-animal-'));
  let running: ChildProcess | undefined;
  afterAll(async () => {
    if (running) await stop(running);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is in an empty store when Ready is printed, and is added once: not again after a restart', async () => {
    const port = await freePort();
    const first = await startPets(join(dataDir, 'pglite'), port);
    running = first.child;
    const listed = (await (await fetch(`http://127.0.0.1:${port}/pets`)).json()) as Array<{ name: string }>;
    expect(listed.map((pet) => pet.name)).toEqual(['Biscuit']);
    await stop(first.child);

    const again = await startPets(join(dataDir, 'pglite'), port);
    running = again.child;
    const relisted = (await (await fetch(`http://127.0.0.1:${port}/pets`)).json()) as Array<{ name: string }>;
    expect(relisted.map((pet) => pet.name)).toEqual(['Biscuit']);
    expect(again.output()).not.toContain('no example animal added');
  }, 300_000);
});
