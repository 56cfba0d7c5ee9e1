/** Waits, with a deadline, for an app of the stack to answer its readiness URL. */
const http = require('node:http');
const { setTimeout: sleep } = require('node:timers/promises');
const { StackError } = require('./stack-error');

/** No single probe may hold the wait: a server that accepts and never answers gets this long. */
const PROBE_TIMEOUT_MS = 2000;
const PROBE_INTERVAL_MS = 100;

/** One GET: undefined when it answered 2xx, else what happened, in words. */
function probe(url, timeoutMs) {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      resolve(status >= 200 && status < 300 ? undefined : `GET ${url} answered ${status}`);
    });
    request.once('timeout', () => {
      resolve(`GET ${url} got no answer within ${timeoutMs} ms`);
      request.destroy();
    });
    request.once('error', (error) => resolve(`GET ${url} failed (${error.code ?? error.message})`));
  });
}

/**
 * Polls `url` until it answers 2xx. Rejects with a StackError at the deadline (saying what it waited for and what
 * it last got), as soon as one of the `watched` processes (those started so far) exits, or when `interrupted`
 * settles with a signal name. `notYet`, when given, is asked first on each attempt: a reason in words while the
 * answer at `url` could still come from someone else, undefined once it cannot.
 */
async function waitReady({ what, url, timeoutMs, watched = [], interrupted, notYet = () => undefined }) {
  const deadline = Date.now() + timeoutMs;
  let settled = false;
  const failures = [];
  for (const child of watched) {
    failures.push(
      child.exited.then(({ code, signal }) => {
        const why = child.lastErrorLine() ? `: ${child.lastErrorLine()}` : '';
        throw new StackError(
          `${child.name} exited (${signal ?? `code ${code}`}) during the start, while the stack waited for ${what}${why}`,
        );
      }),
    );
  }
  if (interrupted)
    failures.push(
      interrupted.then((signal) => {
        throw new StackError(`interrupted by ${signal} while waiting for ${what}`);
      }),
    );
  const polling = (async () => {
    let last = 'was not tried';
    while (!settled) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StackError(
          `${what} was not ready within ${timeoutMs / 1000} s: ${last} (STACK_READY_TIMEOUT_MS sets the wait)`,
        );
      }
      const outcome = notYet() ?? (await probe(url, Math.min(PROBE_TIMEOUT_MS, left)));
      if (outcome === undefined) return;
      last = outcome;
      await sleep(Math.min(PROBE_INTERVAL_MS, Math.max(0, deadline - Date.now())));
    }
  })();
  try {
    await Promise.race([polling, ...failures]);
  } finally {
    settled = true;
    // Whichever lost the race must not surface later as an unhandled rejection.
    polling.catch(() => undefined);
    for (const failure of failures) failure.catch(() => undefined);
  }
}

module.exports = { waitReady };
