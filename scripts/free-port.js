/** A free TCP port on loopback, for servers the tests, the benches and `npm run stack` start. */
const { createServer } = require('node:net');

/** Ports handed out by this process: a free port is not taken until its server starts, so never give one twice. */
const handedOut = new Set();

/**
 * Below Linux's ephemeral range (32768-60999): a port the OS picked there (listen on 0) may be taken, before its
 * server starts, as the local port of any outgoing connection (the suites make thousands), which then fails that
 * server's listen with EADDRINUSE. Ports here are only ever taken by a listen, and a random pick makes two Jest
 * workers choosing at once unlikely to meet; the bind below checks nobody listens there already.
 */
const LOW = 20000;
const HIGH = 32767;

/** Whether a server can listen on `port` now (then released). */
function canListen(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port, never 6379 (the shared Redis), never one this process handed out already. */
async function freePort() {
  for (let tries = 0; tries < 200; tries += 1) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (port === 6379 || handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port on 127.0.0.1 between ${LOW} and ${HIGH} after 200 tries`);
}

module.exports = { freePort };
