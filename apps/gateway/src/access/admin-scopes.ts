/** What an admin token may do (issue #24): the list lives in libs/contract, which the configuration reads too. */
export { ADMIN_SCOPES, isAdminScope } from '@app/contract';
export type { AdminScope } from '@app/contract';
