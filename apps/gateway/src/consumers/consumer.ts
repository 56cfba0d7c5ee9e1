import { Limits, PlanName } from '../plans/plans';

/** An authenticated caller, as the rest of the gateway sees it: never the key. */
export interface Consumer {
  name: string;
  plan: PlanName;
  limits: Limits;
}
