/**
 * What a plan request's fields hold at most (issue #25): the gateway's columns and DTOs, and the portal's form,
 * use the same numbers.
 */
export const EXPECTED_VOLUME_MAX = 200;
export const MESSAGE_MAX = 2000;
