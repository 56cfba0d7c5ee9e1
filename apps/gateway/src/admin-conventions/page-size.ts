/** How many items one page of an admin list holds: every list of the admin API takes `limit` in this range. */
export const PAGE_SIZE = { min: 1, max: 1000, default: 100 };
