import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { olderNode } from '../support/older-node';
import { runIf } from '../support/skip';

const ROOT = join(__dirname, '../..');
const CLIENT = join(ROOT, 'libs/client/dist/index.js');

/**
 * The typed client (libs/client) is a library for other people's processes: it keeps its own `engines` (Node 20 and
 * later) while the project runs on 24. Its build, on the machine's older Node, walks two pages of a stub API.
 */
const older = olderNode();
runIf(older, 'a Node older than the supported one on PATH, outside node_modules').it(
  'the built client walks the pages of the API on an older Node, as its engines promise',
  () => {
    if (!existsSync(CLIENT)) execFileSync('npm', ['run', '-s', 'client:build'], { cwd: ROOT, stdio: 'ignore' });
    const manifest = JSON.parse(readFileSync(join(ROOT, 'libs/client/package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(manifest.engines.node).toBe('>=20');
    const script = `
      const { PetsClient } = require(${JSON.stringify(CLIENT)});
      const server = require('node:http').createServer((request, response) => {
        const second = request.url.includes('after=');
        response.setHeader('content-type', 'application/json');
        if (!second) response.setHeader('link', '</v1/pets?limit=1&after=x>; rel="next"');
        response.end(JSON.stringify([{ id: second ? 2 : 1, name: second ? 'Rex' : 'Tom' }]));
      });
      server.listen(0, '127.0.0.1', async () => {
        const client = new PetsClient({ baseUrl: 'http://127.0.0.1:' + server.address().port + '/v1', apiKey: 'k' });
        const names = [];
        for await (const pet of client.pets({ limit: 1 })) names.push(pet.name);
        console.log(process.version + ' ' + names.join(','));
        server.close();
      });`;
    const output = execFileSync(older!.node, ['-e', script], { encoding: 'utf8', timeout: 30_000 }).trim();
    expect(output).toBe(`${older!.version} Tom,Rex`);
  },
);
