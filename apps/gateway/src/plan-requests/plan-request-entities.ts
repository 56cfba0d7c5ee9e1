import { PlanRequestEntity } from './plan-request.entity';

/** The plan-requests room's table. */
export const PLAN_REQUEST_ENTITIES = [PlanRequestEntity];
