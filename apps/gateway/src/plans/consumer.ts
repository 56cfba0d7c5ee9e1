import { Limits, PlanName } from './plans';

/** An authenticated caller, as the rest of the gateway sees it: never the key. */
export interface Consumer {
  name: string;
  plan: PlanName;
  limits: Limits;
  /** Unix ms where its billing months are cut (its anchor, else its creation time): docs/billing.md. */
  billingAnchorMs: number;
}
