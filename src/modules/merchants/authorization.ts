/**
 * A merchant's authorisation of durapay's app at a channel (Alipay 第三方应用授权, SPEC §5.8):
 * the page the merchant is sent to, and what durapay does when the channel sends the browser back
 * with a one-time code. The state that goes out with the merchant is 32 random bytes, kept as its
 * SHA-256 only, bound to the app and merchant, usable once, for an hour.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ChannelError } from '../../channels/errors';
import { tokenKindOf, type ChannelRegistry } from '../../channels/registry';
import { AppError } from '../../platform/errors';
import { searchAttributes } from '../../platform/workflow/definitions';
import { TypedSearchAttributes } from '@temporalio/common';
import {
  AccountConflictError,
  AccountOfAnotherAppError,
  type ChannelAccountRepository,
} from './account-repository';
import type { ChannelAccount } from './accounts';
import { channelTokenWorkflowId, type ChannelTokenInput } from './messages';

/** How long an authorisation page stays good for. */
export const AUTHORIZATION_TTL_MS = 3600_000;
/** Where the channel sends the merchant's browser back. */
export const APP_AUTH_RETURN_PATH = '/api/v1/channels/alipay/app-auth';

export interface AuthorizationDeps {
  channels: ChannelRegistry;
  accounts: ChannelAccountRepository;
  client: Client;
  taskQueue: string;
  /** How the channel reaches this service (the return URL). */
  publicBaseUrl: string;
}

const hashOf = (state: string) => createHash('sha256').update(state, 'utf8').digest('hex');

function authorizationPort(channels: ChannelRegistry, channelCode: string) {
  const port = channels.get(channelCode)?.accounts?.authorization;
  if (!port)
    throw new AppError('channel_not_support', `channel ${channelCode} has no third-party authorisation`);
  return port;
}

/** Starts an authorisation: the page to send the merchant to, and until when it is good. */
export async function startAuthorization(
  deps: AuthorizationDeps,
  input: {
    appId: string;
    merchantId: string;
    channelCode: string;
    redirectUrl: string | null;
    notifyUrl: string | null;
    /** The Alipay user the merchant is expected to authorise as: another is refused. */
    expectedUserId: string | null;
  },
): Promise<{ authorizeUrl: string; expiresAt: Date }> {
  const port = authorizationPort(deps.channels, input.channelCode);
  const state = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + AUTHORIZATION_TTL_MS);
  await deps.accounts.beginAuthorization({ ...input, stateHash: hashOf(state), expiresAt });
  const redirectUri = new URL(APP_AUTH_RETURN_PATH, deps.publicBaseUrl).toString();
  return { authorizeUrl: port.pageUrl({ redirectUri, state }), expiresAt };
}

/** Why an authorisation's return is not taken: said to the merchant on a page of its own. */
export class AuthorizationRefused extends Error {
  override name = 'AuthorizationRefused';
  constructor(
    message: string,
    /** 400: the link or code is bad; 502: the channel did not answer. */
    readonly status: 400 | 502,
  ) {
    super(message);
  }
}

/**
 * The channel's return with a code: the state is taken (once), the code exchanged for a token,
 * the token saved sealed as the merchant's account at the channel, and the workflow that keeps it
 * fresh started. A forged, used or expired state, or a code the channel refuses, saves nothing.
 */
export async function completeAuthorization(
  deps: AuthorizationDeps,
  input: { channelCode: string; state: string; code: string },
): Promise<{
  merchantId: string;
  redirectUrl: string | null;
  account: ChannelAccount;
  followError?: string;
}> {
  const pending = await deps.accounts.consumeAuthorization(hashOf(input.state));
  if (!pending || pending.channelCode !== input.channelCode) {
    throw new AuthorizationRefused(
      'This authorisation link is not valid: it was used already, it is more than an hour old, or durapay did not issue it. Ask for a new one.',
      400,
    );
  }
  let token;
  try {
    token = await authorizationPort(deps.channels, input.channelCode).exchange(input.code);
  } catch (err) {
    if (err instanceof ChannelError && err.kind === 'refused') {
      throw new AuthorizationRefused(
        `The channel did not accept the authorisation code (${err.message}). Nothing was saved; ask for a new link.`,
        400,
      );
    }
    throw new AuthorizationRefused(
      'The channel did not answer while the authorisation was saved. Nothing was saved; ask for a new link.',
      502,
    );
  }
  // A link that reached someone else must not give the merchant someone else's account.
  if (pending.expectedUserId !== null && token.userId !== pending.expectedUserId) {
    throw new AuthorizationRefused(
      `This authorisation was made by Alipay account ${token.userId}, not the account ${pending.expectedUserId} it was meant for. Nothing was saved.`,
      400,
    );
  }
  const kind = tokenKindOf(input.channelCode);
  if (!kind) throw new Error(`channel ${input.channelCode} declares no token account for an authorisation`);
  let account;
  try {
    ({ account } = await deps.accounts.attach({
      appId: pending.appId,
      merchantId: pending.merchantId,
      channelCode: input.channelCode,
      claim: { kind, value: token.appAuthToken },
      confirmed: { accountNo: token.userId, tokenExpiresAt: token.expiresAt },
      source: 'authorized',
      refresh: { refreshToken: token.refreshToken, refreshExpiresAt: token.refreshExpiresAt },
      // Renewed by the same Alipay user, it replaces; another account attached stays.
      sameNumberOnly: true,
    }));
  } catch (err) {
    if (err instanceof AccountConflictError) {
      throw new AuthorizationRefused(
        `The merchant already has another Alipay account${err.attachedNo ? ` (${err.attachedNo})` : ''}: detach it first if this one is to replace it. Nothing was saved.`,
        400,
      );
    }
    if (err instanceof AccountOfAnotherAppError) {
      throw new AuthorizationRefused(`${err.message}. Nothing was saved.`, 400);
    }
    throw err;
  }
  // Saved is saved: a workflow that could not be started is logged by the caller, not a failure.
  let followError: string | undefined;
  try {
    await followToken(deps, account, pending.notifyUrl);
  } catch (err) {
    followError = err instanceof Error ? err.message : String(err);
  }
  return { merchantId: pending.merchantId, redirectUrl: pending.redirectUrl, account, followError };
}

/**
 * Starts the workflow that follows an account's token (channelTokenWorkflow): refreshes it, or
 * without a refresh token marks the account expired when it runs out, and tells `notifyUrl`.
 */
export async function followToken(
  deps: Pick<AuthorizationDeps, 'client' | 'taskQueue'>,
  account: ChannelAccount,
  notifyUrl: string | null,
): Promise<void> {
  const input: ChannelTokenInput = {
    accountId: account.id,
    appId: account.appId,
    merchantId: account.merchantId,
    channelCode: account.channelCode,
    notifyUrl,
    announce: notifyUrl !== null,
  };
  await deps.client.workflow.start('channelTokenWorkflow', {
    workflowId: channelTokenWorkflowId(account),
    taskQueue: deps.taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    typedSearchAttributes: new TypedSearchAttributes([
      { key: searchAttributes.AppId, value: account.appId },
      { key: searchAttributes.MerchantId, value: account.merchantId },
      { key: searchAttributes.ChannelCode, value: account.channelCode },
      { key: searchAttributes.BizStatus, value: 'active' },
    ]),
  });
}
