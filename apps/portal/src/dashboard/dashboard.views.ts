import type { PlanName } from '@app/contract';
import type {
  AdminBilling,
  AdminPlanRequest,
  CreditsPanel,
  KeyTable,
  PageModel,
  PlanStatement,
  PolicyCard,
  UsageTable,
} from '@app/web';
import { typedRender, typedRenderer } from '@app/web';

export interface DashboardView extends PageModel {
  email: string;
  consumerName: string;
  current: PlanStatement;
  /** Each policy in force (minute, day, month, credits): used, remaining, when it resets. */
  policies: PolicyCard[];
  /** The billing month in progress, when a monthly quota is in force. */
  billingPeriod: AdminBilling['currentPeriod'] | null;
  /** Only when credits are in force. */
  credits: CreditsPanel | null;
  /** The credits ledger could not be read (the admin API refused or failed): words in its place. */
  ledgerUnavailable: boolean;
  banned: boolean;
  banSecondsLeft: number | null;
  usage: UsageTable | null;
  keyTable: KeyTable;
  canCreate: boolean;
  maxKeys: number;
  latestRequest?: AdminPlanRequest;
  /** No pending request: the link to the plan page shows. */
  mayAskForPlan: boolean;
}

export interface NewKeyView extends PageModel {
  /** Absent on a reload: the page says the key was shown once. */
  key?: string;
  /** Set by a rotation: the key it replaced and when that one stops. */
  rotated?: { hint: string; expiresAt: string | null };
  current?: PlanStatement;
  /** The account's first key: the page welcomes the developer. */
  welcome?: boolean;
}

export interface RevokeView extends PageModel {
  key: { id: string; hint: string };
  action: string;
}

export interface PlanOffer {
  value: PlanName;
  label: string;
}

export interface PlanView extends PageModel {
  current: PlanStatement;
  /** The request waiting for an answer: shown instead of the form. */
  pending?: AdminPlanRequest;
  plans: PlanOffer[];
  maxVolume: number;
  maxMessage: number;
  typed?: { plan: string; expectedVolume: string; message: string };
  errors?: Partial<Record<'plan' | 'expectedVolume' | 'message', string>>;
  failed?: string;
}

/** The portal's pages (of the dashboard) and their models: `@Page('dashboard')` checks a handler's answer. */
export interface PortalViews {
  dashboard: DashboardView;
  'new-key': NewKeyView;
  revoke: RevokeView;
  plan: PlanView;
}

export const Page = typedRender<PortalViews>();
export const renderView = typedRenderer<PortalViews>();
