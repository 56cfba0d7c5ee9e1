#!/usr/bin/env node
/**
 * `node bench/cli-startup.js [--runs 20] [SCRIPT...]` (issue #35 point 7): the keys CLI's start-up, hyperfine-style.
 *
 * For each script (default scripts/keys.js; name more, e.g. a copy of an earlier version, to compare them) it runs
 * `node SCRIPT --help` (the usage: no admin call) and `node SCRIPT list` against an address nothing listens on
 * (http://127.0.0.1:1: the admin client is loaded, the call is refused at once, exit 1), --runs times each,
 * the scripts taking turns run by run (ABAB...) so that a change in the machine's load hits each alike. Prints the
 * wall time per command (spawn to exit: median, min, p90) and the child's CPU time (user + system, from
 * /usr/bin/time, 10 ms resolution: median, min), in ms. On a loaded machine the CPU time is the steadier figure.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: 'string', default: '20' } },
});
const runs = Number(values.runs);
const scripts = positionals.length ? positionals : [path.join(__dirname, '..', 'scripts', 'keys.js')];
const commands = [
  { label: '--help', args: ['--help'], status: 0 },
  { label: 'list (refused)', args: ['list'], status: 1 },
];
const env = { ...process.env, ADMIN_URL: 'http://127.0.0.1:1', ADMIN_TOKEN: 'bench' };

/** @type {Map<string, {wall: number[], cpu: number[]}>} */
const samples = new Map();
for (let run = 0; run < runs; run += 1) {
  const order = run % 2 ? [...scripts].reverse() : scripts;
  for (const script of order)
    for (const command of commands) {
      const started = process.hrtime.bigint();
      const child = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, script, ...command.args], {
        env,
        encoding: 'utf8',
      });
      const wall = Number(process.hrtime.bigint() - started) / 1e6;
      const cpu = /cpu ([0-9.]+) ([0-9.]+)\s*$/.exec(child.stderr);
      if (!cpu || child.status !== command.status)
        throw new Error(
          `${script} ${command.label}: exit ${child.status}, expected ${command.status}\n${child.stderr}`,
        );
      const key = `${script}\t${command.label}`;
      const entry = samples.get(key) ?? { wall: [], cpu: [] };
      entry.wall.push(wall);
      entry.cpu.push((Number(cpu[1]) + Number(cpu[2])) * 1000);
      samples.set(key, entry);
    }
}

/**
 * @param {number[]} list
 * @param {number} q
 */
const quantile = (list, q) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
console.log(`${runs} runs each, taking turns; ms`);
console.log('script\tcommand\twall median\tmin\tp90\tCPU median\tmin');
for (const [key, { wall, cpu }] of samples) {
  const [script, label] = key.split('\t');
  const figures = [quantile(wall, 0.5), Math.min(...wall), quantile(wall, 0.9), quantile(cpu, 0.5), Math.min(...cpu)];
  console.log([path.relative(process.cwd(), script), label, ...figures.map((v) => v.toFixed(0))].join('\t'));
}
