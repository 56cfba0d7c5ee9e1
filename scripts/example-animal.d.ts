/** Types of example-animal.js (plain Node: npm start runs it before anything is built). */

/** The animal npm start adds to an empty store on its embedded database. */
export const EXAMPLE_ANIMAL: { name: string; categoryId: number; status: 'available' };

/** Adds EXAMPLE_ANIMAL through the pets service at `petsUrl` when its store is empty; undefined when it was not. */
export function addExampleAnimalIfEmpty(
  petsUrl: string,
  internalSecret?: string,
): Promise<{ id: number; name: string } | undefined>;
