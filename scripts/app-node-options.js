/**
 * The Node flags both apps run with wherever this repository starts them (`npm start`, `npm run stack`, the
 * benches; the Dockerfile and docker-compose.yml carry the same value, and a test holds them equal).
 *
 * The heap limit keeps each app under 200 MB resident under load without anyone passing flags: the live heap of
 * either app is ~40 MB; 64 MB of old space made V8 collect all the time (a major GC every few requests), 96 MB
 * measured 155-175 MB peak resident (docs/benchmarks.md).
 */
const APP_NODE_OPTIONS = '--max-old-space-size=96';

/** NODE_OPTIONS for an app: ours first, the user's after, since the last occurrence of a V8 flag wins. */
function appNodeOptions(userOptions = process.env.NODE_OPTIONS) {
  return [APP_NODE_OPTIONS, userOptions].filter(Boolean).join(' ');
}

module.exports = { APP_NODE_OPTIONS, appNodeOptions };
