/** The admin document's tags (admin-openapi.ts describes them; each controller names its own). */
export const ADMIN_TAG = 'consumers';
export const TOKENS_TAG = 'tokens';
