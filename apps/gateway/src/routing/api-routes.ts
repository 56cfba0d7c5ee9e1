/** The public API's version prefix: every route but health and the docs lives under it. */
export const API_PREFIX = '/v1';
/** The pets controller's path under API_PREFIX. */
export const PETS_PATH = 'pets';
/** Paths outside API_PREFIX that Nest serves (the gateway's own health). */
export const UNPREFIXED_PATHS = ['health/live', 'health/ready'];
