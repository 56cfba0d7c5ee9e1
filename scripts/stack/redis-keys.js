/**
 * The stack's Redis keys: every gateway of a run writes under one prefix (REDIS_KEY_PREFIX), fresh per run unless
 * the user set one. On exit the stack deletes the keys of the prefix it made; a prefix the user chose is theirs
 * and kept, like a DATABASE_URL they gave.
 */
const Redis = require('ioredis');

/** Deletes every key of `url`'s Redis that starts with `prefix` (SCAN + UNLINK, never KEYS); resolves to how many. */
async function deleteKeysWithPrefix(url, prefix) {
  if (!prefix) throw new Error('deleteKeysWithPrefix needs a non-empty prefix');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  await redis.connect();
  // A prefix is matched literally: glob characters in it are escaped.
  const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 500);
      if (keys.length > 0) deleted += await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

module.exports = { deleteKeysWithPrefix };
