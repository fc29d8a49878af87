// What the merchants module's workflow and its starters share: workflow-safe (no Node built-ins).

/**
 * The workflow that keeps an authorised channel account's token fresh (SPEC §5.8). Named by its
 * app and merchant too: an account's number is its database's sequence, and two deployments (or
 * test stacks) sharing a Temporal namespace would otherwise meet on the same id.
 */
export const channelTokenWorkflowId = (a: { appId: string; merchantId: string; id: number }) =>
  `channel-account-token:${a.appId}:${a.merchantId}:${a.id}`;

export interface ChannelTokenInput {
  accountId: number;
  appId: string;
  merchantId: string;
  channelCode: string;
  /** Where merchant.channel_account.updated is posted (the authorisation's notify_url), if anywhere. */
  notifyUrl: string | null;
  /** Whether the account's authorisation is announced first (a new run after continue-as-new is not). */
  announce: boolean;
}

/** What the token workflow does next: wait and refresh, or stop (the account is gone or ended). */
export type TokenPlan =
  | { kind: 'refresh'; delayMs: number }
  | { kind: 'expire'; delayMs: number }
  | { kind: 'done'; reason: 'detached' | 'expired' };
