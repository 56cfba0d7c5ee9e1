/**
 * What `npm start` prints (docs/operations.md, "What npm start prints"): its own phase lines, each app's log lines
 * in one human format, and the closing Ready block. The apps write JSON lines (pino, as in production); here each
 * becomes `<app> | HH:MM:SS <level> <context>: <message>`, so a newcomer reads one format whichever app wrote it.
 */

const NAME_WIDTH = 8;
const PINO_LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** A line of the supervisor's own: `start    | building 2/6: ...`. */
function phase(text) {
  process.stdout.write(`${'start'.padEnd(NAME_WIDTH)} | ${text}\n`);
}

/** One pino JSON line as a human line; undefined when the line is not pino JSON (printed as it is). */
function humanLine(line) {
  if (!line.startsWith('{')) return undefined;
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof entry.level !== 'number' || typeof entry.msg !== 'string') return undefined;
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 19) : '';
  const level = (PINO_LEVELS[entry.level] ?? String(entry.level)).padEnd(5);
  const context = entry.context && !entry.req ? `${entry.context}: ` : '';
  const stack = entry.stack ?? entry.err?.stack;
  return `${time} ${level} ${context}${entry.msg}${typeof stack === 'string' ? `\n${stack}` : ''}`;
}

/** The apps' output, followed line by line. */
class AppOutput {
  constructor() {
    /** The demo key the gateway minted during this start (its block is held back for the Ready block). */
    this.demoKey = undefined;
    this.isReady = false;
    this.inDemoKeyBlock = false;
  }

  follow(name, stream, target) {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop();
      for (const line of lines) this.write(name, line, target);
    });
    stream.on('end', () => rest && this.write(name, rest, target));
  }

  /** From now on the readiness polls have stopped: a request to /health is someone else's and is shown. */
  ready() {
    this.isReady = true;
  }

  write(name, line, target) {
    if (this.holdsBack(line)) return;
    const human = humanLine(line);
    for (const part of (human ?? line).split('\n')) target.write(`${name.padEnd(NAME_WIDTH)} | ${part}\n`);
  }

  /** Blank lines, the supervisor's own readiness polls, and the gateway's demo-key block (shown in Ready). */
  holdsBack(line) {
    if (line.trim() === '') return true;
    if (/^\s*Development API key \(/.test(line)) {
      this.inDemoKeyBlock = true;
      return true;
    }
    if (this.inDemoKeyBlock) {
      const key = /^\s+(petk_\S+)\s*$/.exec(line);
      if (key) this.demoKey = key[1];
      if (/^\s*Open \/docs/.test(line)) this.inDemoKeyBlock = false;
      return true;
    }
    if (!this.isReady && line.startsWith('{') && /"path":"\/health\/ready"/.test(line)) return true;
    return false;
  }
}

/** The closing block: a title line starting with "Ready", then one aligned row per address. */
function readyBlock(title, rows) {
  const width = Math.max(...rows.map(([label]) => label.length));
  return `\n${title}:\n${rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n')}\n\n`;
}

module.exports = { AppOutput, humanLine, phase, readyBlock };
