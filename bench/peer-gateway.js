#!/usr/bin/env node
/**
 * The peer in `npm run bench`: the gateway a team would assemble from well-known packages instead of ours, doing
 * the same job on the measured routes. fastify 5; key auth from a hash map (`Authorization: Bearer <key>` ->
 * consumer, 401 otherwise); one per-minute limit per consumer with @fastify/rate-limit on Redis (ioredis, its own
 * key prefix); GET /v1/pets, POST /v1/pets and GET /v1/pets/:id forwarded to the pets service without the /v1
 * by @fastify/reply-from (undici, keep-alive). Production-ish: logger at warn, defaults everywhere else.
 *
 * Environment: PORT (4103), HOST (127.0.0.1), PETS_URL (http://127.0.0.1:3001), REDIS_URL
 * (redis://127.0.0.1:6379), REDIS_KEY_PREFIX ('peer:'), PEER_KEYS: a JSON object
 * {"<key>": {"consumer": "<name>", "perMinute": N}}.
 * Not part of the product: a yardstick for the bench only.
 */
const Fastify = require('fastify');
const Redis = require('ioredis');

const env = process.env;
const keys = new Map(Object.entries(JSON.parse(env.PEER_KEYS || '{}')));
const petsUrl = env.PETS_URL || 'http://127.0.0.1:3001';

async function main() {
  const app = Fastify({ logger: { level: env.LOG_LEVEL || 'warn' } });
  // As the plugin's README recommends for rate limiting: fail fast rather than queue behind a dead Redis.
  // PEER_REDIS_CONNECT_TIMEOUT_MS: longer under callgrind (bench/instructions.js), where starting takes minutes.
  const redis = new Redis(env.REDIS_URL || 'redis://127.0.0.1:6379', {
    connectTimeout: Number(env.PEER_REDIS_CONNECT_TIMEOUT_MS || 500),
    maxRetriesPerRequest: 1,
  });

  app.decorateRequest('consumer', null);
  await app.register(require('@fastify/rate-limit'), {
    hook: 'preHandler', // after the key is known
    redis,
    nameSpace: `${env.REDIS_KEY_PREFIX || 'peer:'}rl:`,
    timeWindow: 60_000,
    keyGenerator: (request) => request.consumer.consumer,
    max: (request) => request.consumer.perMinute,
  });
  await app.register(require('@fastify/reply-from'), { base: petsUrl });

  const forward = (request, reply) => reply.from(request.url.slice(3)); // strip "/v1"
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', async (request, reply) => {
        const header = request.headers.authorization;
        const consumer = header && header.startsWith('Bearer ') ? keys.get(header.slice(7)) : undefined;
        if (!consumer) {
          return reply.code(401).send({ code: 'UNAUTHORIZED', message: 'A valid API key is required', status: 401 });
        }
        request.consumer = consumer;
      });
      v1.get('/pets', forward);
      v1.post('/pets', forward);
      v1.get('/pets/:id', forward);
    },
    { prefix: '/v1' },
  );
  app.get('/health/live', { config: { rateLimit: false } }, async () => ({ status: 'ok' }));

  const close = () => app.close().finally(() => redis.disconnect());
  process.on('SIGTERM', close);
  process.on('SIGINT', close);
  await app.listen({ port: Number(env.PORT || 4103), host: env.HOST || '127.0.0.1' });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
