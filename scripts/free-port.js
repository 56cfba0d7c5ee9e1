/** A free TCP port on loopback, for servers the tests, the benches and `npm run stack` start. */
const { createServer } = require('node:net');

/** Ports handed out by this process: a free port is not taken until its server starts, so never give one twice. */
const handedOut = new Set();

/** A free port (the OS picks it; we release it at once), never 6379: the shared Redis. */
async function freePort() {
  for (;;) {
    const server = createServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    await new Promise((resolve) => server.close(resolve));
    if (!handedOut.has(port) && port !== 6379) {
      handedOut.add(port);
      return port;
    }
  }
}

module.exports = { freePort };
