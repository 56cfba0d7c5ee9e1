/** Waiting for a condition or for an HTTP server, for the tests, the benches and `npm run stack`. */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it is true (a throw counts as "not yet"); fails after `timeoutMs`, naming `what`. */
async function until(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Waits until `url` answers below 500 (a health route: /health/ready answers 503 until it is ready). */
function waitForHttp(url, timeoutMs = 60_000) {
  return until(
    url,
    async () => {
      const response = await fetch(url);
      await response.arrayBuffer();
      return response.status < 500;
    },
    timeoutMs,
  );
}

module.exports = { until, waitForHttp };
