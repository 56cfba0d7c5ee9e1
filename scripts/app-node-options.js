/**
 * The Node flags both apps run with wherever this repository starts them (`npm start`, `npm run stack`, the
 * benches; the Dockerfile and docker-compose.yml carry the same value, and a test holds them equal).
 *
 * The heap limits keep each app's footprint bounded without anyone passing flags (docs/benchmarks.md, issue #47
 * point 5). Old space: 128 MB. On Node 24 the live heap of the gateway is 54-57 MB (1 or 10,000 consumers); at
 * 96 MB a gateway serving 10,000 consumers still collected every ~100 requests. Young generation: semi-spaces of
 * 16 MB, Node 20's size. Node 24 sizes them from the machine's memory (64 MB each on 23 GiB), and that young
 * generation next to a small old space made V8 run a Mark-Compact every ~40 requests even for one consumer.
 */
const APP_NODE_OPTIONS = '--max-old-space-size=128 --max-semi-space-size=16';

/** NODE_OPTIONS for an app: ours first, the user's after, since the last occurrence of a V8 flag wins. */
function appNodeOptions(userOptions = process.env.NODE_OPTIONS) {
  return [APP_NODE_OPTIONS, userOptions].filter(Boolean).join(' ');
}

module.exports = { APP_NODE_OPTIONS, appNodeOptions };
