/**
 * What `npm start` and `npm run stack` print (docs/operations.md, "What npm start prints"; docs/stack.md): their own
 * lines, each app's log lines in one human format, and `npm start`'s closing Ready block. The apps write JSON lines
 * (pino, as in production); here each becomes `<app> | HH:MM:SS <level> <context>: <message>`, so a newcomer reads
 * one format whichever app wrote it. A request is one line, the gateway's: the pets service's line for the same
 * request (below 500) is held back when a gateway is in front of it.
 */

const NAME_WIDTH = 8;
const PINO_LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** A line of the supervisor's own: `start    | building 2/6: ...`. */
function phase(text) {
  process.stdout.write(`${'start'.padEnd(NAME_WIDTH)} | ${text}\n`);
}

/** A pino JSON line's entry; undefined when the line is not one. */
function pinoEntry(line) {
  if (!line.startsWith('{')) return undefined;
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return undefined;
  }
  return typeof entry.level === 'number' && typeof entry.msg === 'string' ? entry : undefined;
}

/**
 * A request line of the pets service that a gateway in front of it logs too: the gateway forwards the request with
 * its request id and passes a status below 500 on as it is, so its own line says all of it (a client's 404 at warn
 * is one line, not two). A pets 5xx is a fault inside the pets service and keeps its line (and its stack).
 */
function repeatedByTheGateway(entry) {
  return (
    entry.app === 'pets' && entry.req !== undefined && typeof entry.res?.status === 'number' && entry.res.status < 500
  );
}

/** One pino JSON line as a human line; undefined when the line is not pino JSON (printed as it is). */
function humanLine(line) {
  const entry = pinoEntry(line);
  return entry === undefined ? undefined : humanText(entry);
}

/** A pino entry as `HH:MM:SS <level> <context>: <message>`, its stack on the lines below. */
function humanText(entry) {
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 19) : '';
  const level = (PINO_LEVELS[entry.level] ?? String(entry.level)).padEnd(5);
  const context = entry.context && !entry.req ? `${entry.context}: ` : '';
  const stack = entry.stack ?? entry.err?.stack;
  return `${time} ${level} ${context}${entry.msg}${typeof stack === 'string' ? `\n${stack}` : ''}`;
}

/** The apps' output, followed line by line. */
class AppOutput {
  /**
   * `nameWidth`: the app name's column (8: "gateway"; the stack's "gateway-12" needs 10). `gatewayInFront`: a gateway
   * fronts the pets service, so the pets service's request lines below 500 are held back (repeatedByTheGateway).
   */
  constructor({ nameWidth = NAME_WIDTH, gatewayInFront = false } = {}) {
    this.nameWidth = nameWidth;
    this.gatewayInFront = gatewayInFront;
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
    const entry = pinoEntry(line);
    if (entry !== undefined && this.gatewayInFront && repeatedByTheGateway(entry)) return;
    const human = entry === undefined ? line : humanText(entry);
    for (const part of human.split('\n')) target.write(`${name.padEnd(this.nameWidth)} | ${part}\n`);
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
