/**
 * An open-loop load at a truly fixed rate: request i is due at start + i / rate, whatever the answers before it
 * did, and its latency counts from that due time (no coordinated omission: a stall delays every request due
 * during it, and they all show it).
 *
 * Why not autocannon's `overallRate`: it lets each connection send its quota for the second back to back, then
 * waits for the next second, so "half the capacity" is in fact full-speed bursts for half of every second, and
 * its p99 measures the queue of a burst (tens of ms, moving with the phase of the bursts), not the tail of a
 * server at half load.
 */
const { performance } = require('node:perf_hooks');
const { Pool } = require('undici');
const { percentile } = require('./support');

/**
 * `{ url, headers, method, body, rate, seconds, connections }` → `{ sent, ok, errors, p50, p90, p95, p99, p999,
 * max }` (ms, from the due time). Requests due while every connection is busy wait in undici's queue, and count.
 * `headers` may be a function of the request's index (e.g. a key per request, round robin).
 */
async function pacedLoad({ url, headers = {}, method = 'GET', body, rate, seconds, connections = 8 }) {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const path = target.pathname + target.search;
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  let sent = 0;
  let done = 0;
  let errors = 0;
  let ok = 0;
  const start = performance.now();
  await new Promise((resolve) => {
    const send = () => {
      const elapsed = performance.now() - start;
      for (; sent < total && sent <= (elapsed * rate) / 1000; sent += 1) {
        const due = start + (sent * 1000) / rate;
        const index = sent;
        pool
          .request({ path, method, headers: typeof headers === 'function' ? headers(index) : headers, body })
          .then(async (answer) => {
            await answer.body.dump();
            if (answer.statusCode < 400) ok += 1;
            else errors += 1;
          })
          .catch(() => (errors += 1))
          .finally(() => {
            latencies[index] = performance.now() - due;
            done += 1;
            if (done === total) resolve();
          });
      }
      if (sent < total) setTimeout(send, Math.max(0, (sent * 1000) / rate - (performance.now() - start)));
    };
    send();
  });
  await pool.close();
  const at = (q) => +percentile(latencies, q).toFixed(2);
  return {
    sent: total,
    ok,
    errors,
    p50: at(0.5),
    p90: at(0.9),
    p95: at(0.95),
    p99: at(0.99),
    p999: at(0.999),
    max: +Math.max(...latencies).toFixed(2),
  };
}

module.exports = { pacedLoad };
