/**
 * `npm start`'s example animal (issue #48.10): on the embedded database a fresh store is empty, and a newcomer's
 * first `GET /v1/pets` (the README's curl, Swagger UI's listPets) would answer `[]`. Once the pets service is ready,
 * npm start asks it for one animal; when it has none, it adds this one. Never on a database server (DATABASE_URL)
 * nor in production: npm start calls this only on its embedded PGlite, outside NODE_ENV=production.
 */
const EXAMPLE_ANIMAL = { name: 'Biscuit', categoryId: 1, status: 'available' };

/**
 * Adds EXAMPLE_ANIMAL through the pets service at `petsUrl` when its store is empty; resolves to the animal added,
 * or undefined when the store had one already. `internalSecret`: the pets service's INTERNAL_SECRET, when set.
 */
async function addExampleAnimalIfEmpty(petsUrl, internalSecret) {
  const headers = internalSecret ? { 'x-internal-secret': internalSecret } : {};
  const listed = await fetch(`${petsUrl}/pets?limit=1`, { headers, signal: AbortSignal.timeout(5000) });
  if (!listed.ok) throw new Error(`GET /pets answered ${listed.status}`);
  if ((await listed.json()).length > 0) return undefined;
  const added = await fetch(`${petsUrl}/pets`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(EXAMPLE_ANIMAL),
    signal: AbortSignal.timeout(5000),
  });
  if (added.status !== 201) throw new Error(`POST /pets answered ${added.status}`);
  return added.json();
}

module.exports = { EXAMPLE_ANIMAL, addExampleAnimalIfEmpty };
