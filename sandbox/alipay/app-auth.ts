/**
 * App authorisations (第三方应用授权): a merchant's consent on the authorisation page
 * (app-auth-page.ts), the one-time app_auth_code it hands the app, the code's exchange and the
 * token's refresh (alipay.open.auth.token.app), and the query of a token
 * (alipay.open.auth.token.app.query). A merchant authorises an app: the token is that app's, and
 * only that app may use it; another app asking is told the token is invalid, as Alipay tells it
 * (an app_auth_token answers only to the app it was granted to, even within one account).
 *
 * As Alipay documents alipay.open.auth.token.app: an app_auth_code is single-use and expires a day
 * after it was handed out; expires_in and re_expires_in are seconds from the call. Its answer carries
 * the newer `tokens` list and the same fields flat (both are in Alipay's response definition).
 * Refusals are Alipay's 40002 sub_codes for the method: isv.code-invalid (a code unknown, used,
 * expired or another app's), isv.refresh-token-invalid (a refresh token unknown or another
 * app's), isv.refreshed-token-invalid (one already used: refresh with the one its refresh
 * returned), isv.refresh-token-time-out (one past its re_expires_in).
 *
 * A refresh replaces the token and its refresh token. Alipay's API page says only that the old
 * refresh token stops working; its support answers say the old app_auth_token keeps working for 10
 * minutes after the refresh, so that calls in flight finish: so here (scaled by timeScale, like
 * the code's day). Token lifetimes are what the wire reports and are never scaled.
 *
 * Trades belong to the merchant, not to one of its tokens: a token this gateway made names its
 * authorisation (the app and the merchant's user id), so a refreshed token finds the trades made
 * with the one before. A token it never made keeps its trades apart under itself, as before
 * (tests name made-up merchants that way).
 */
import { randomBytes } from 'node:crypto';
import Joi from 'joi';
import type { Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import {
  beijingTime,
  businessFailed,
  invalidArgument,
  missingArgument,
  randomDigits,
  tokenRefused,
  userId,
} from './wire';

/** What a test asks for when it mints a token; every field has a default. */
export interface AppAuthGrant {
  /** The authorising merchant's user id (2088…); a new one by default. */
  userId?: string;
  /** The merchant's own app it authorised (auth_app_id); a new one by default. */
  authAppId?: string;
  /** The app the token is granted to: this gateway's app by default; another app's is unknown here. */
  isvAppId?: string;
  /** When the authorisation began; now by default. */
  authStart?: Date;
  /** How long the token lasts from authStart, in seconds; the gateway's expires_in by default. */
  expiresInSeconds?: number;
  /** How long its refresh token lasts from authStart, in seconds; the gateway's re_expires_in by default. */
  reExpiresInSeconds?: number;
  /** The methods authorised; the trade methods by default. */
  authMethods?: readonly string[];
}

/** A token as a test sees it. */
export interface AlipaySandboxAppAuth {
  appAuthToken: string;
  appRefreshToken: string;
  userId: string;
  authAppId: string;
  isvAppId: string;
  authStart: Date;
  /** When the token stops working (earlier than its expiry once a refresh replaced it). */
  authEnd: Date;
  /** When its refresh token stops working. */
  refreshEnd: Date;
  /** Whether its refresh token was used (the token is then replaced). */
  refreshed: boolean;
  authMethods: string[];
}

/** How long the tokens this gateway makes last: expires_in and re_expires_in, in seconds. */
export interface AppAuthLifetimes {
  expiresInSeconds: number;
  reExpiresInSeconds: number;
}

export interface AppAuthBookOptions extends Partial<AppAuthLifetimes> {
  /** This gateway's app: the one the page authorises and tokens are granted to by default. */
  appId: string;
  /** The gateway's time scale: multiplies the code's life and a replaced token's grace. */
  scale: number;
  /** How long an app_auth_code stays usable, before scale; a day by default, as Alipay documents. */
  codeTtlMs?: number;
}

/** A merchant the page can offer again: its user id and its own app. */
export interface AppAuthMerchant {
  userId: string;
  authAppId: string;
}

interface TokenRecord {
  appAuthToken: string;
  appRefreshToken: string;
  userId: string;
  authAppId: string;
  isvAppId: string;
  authStart: number;
  authEnd: number;
  refreshEnd: number;
  refreshed: boolean;
  authMethods: string[];
}

interface CodeRecord {
  merchant: AppAuthMerchant;
  isvAppId: string;
  expiresAt: number;
  used: boolean;
}

const DEFAULT_METHODS = [
  'alipay.trade.precreate',
  'alipay.trade.create',
  'alipay.trade.query',
  'alipay.trade.close',
  'alipay.trade.refund',
  'alipay.trade.fastpay.refund.query',
];
const DAY_SECONDS = 86_400;
export const DEFAULT_EXPIRES_IN_SECONDS = 365 * DAY_SECONDS;
export const DEFAULT_RE_EXPIRES_IN_SECONDS = 372 * DAY_SECONDS;
const CODE_TTL_MS = DAY_SECONDS * 1000;
/** How long a replaced token keeps working after the refresh that replaced it, before scale. */
const REPLACED_TOKEN_GRACE_MS = 10 * 60_000;

const querySchema = Joi.object<{ app_auth_token: string }>({
  app_auth_token: Joi.string().min(1).max(64).required(),
}).required();

const tokenSchema = Joi.object<{ grant_type: string; code?: string; refresh_token?: string }>({
  grant_type: Joi.string().max(20).required(),
  code: Joi.string().min(1).max(40),
  refresh_token: Joi.string().min(1).max(40),
}).required();

/** Alipay's shape of a token or a refresh token: the month, BB, then 32 characters. */
const tokenValue = (now: number) =>
  `${beijingTime(now).slice(0, 7).replace('-', '')}BB${randomBytes(16).toString('hex')}`;

const codeInvalid = () => invalidArgument('isv.code-invalid', '授权码code无效');

export class AppAuthBook {
  private readonly tokens = new Map<string, TokenRecord>();
  private readonly byRefreshToken = new Map<string, TokenRecord>();
  private readonly codes = new Map<string, CodeRecord>();
  private readonly merchantApps = new Map<string, string>();
  private readonly lifetimes: AppAuthLifetimes;

  constructor(private readonly options: AppAuthBookOptions) {
    this.lifetimes = {
      expiresInSeconds: options.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS,
      reExpiresInSeconds: options.reExpiresInSeconds ?? DEFAULT_RE_EXPIRES_IN_SECONDS,
    };
  }

  get appId(): string {
    return this.options.appId;
  }

  /** Changes expires_in and re_expires_in of the tokens made from now on. */
  setLifetimes(lifetimes: Partial<AppAuthLifetimes>): AppAuthLifetimes {
    Object.assign(this.lifetimes, lifetimes);
    return { ...this.lifetimes };
  }

  mint(grant: AppAuthGrant = {}, now = Date.now()): AlipaySandboxAppAuth {
    const start = grant.authStart?.getTime() ?? now;
    const record = this.createToken(
      {
        userId: grant.userId ?? userId(),
        authAppId: grant.authAppId ?? this.merchantApp(grant.userId),
        isvAppId: grant.isvAppId ?? this.options.appId,
        authMethods: [...(grant.authMethods ?? DEFAULT_METHODS)],
      },
      start,
      {
        expiresInSeconds: grant.expiresInSeconds ?? this.lifetimes.expiresInSeconds,
        reExpiresInSeconds: grant.reExpiresInSeconds ?? this.lifetimes.reExpiresInSeconds,
      },
    );
    return view(record);
  }

  /** The merchants that authorised this gateway's app before, for the page to offer again. */
  merchants(): AppAuthMerchant[] {
    return [...this.merchantApps].map(([id, authAppId]) => ({ userId: id, authAppId }));
  }

  /**
   * The merchant consented on the page: a new single-use app_auth_code for `isvAppId`, for the
   * merchant `merchantUserId` (its own app kept when it authorised before), or a new merchant.
   */
  openCode(isvAppId: string, merchantUserId: string | undefined, now: number): string {
    const merchant = {
      userId: merchantUserId ?? userId(),
      authAppId: this.merchantApp(merchantUserId),
    };
    this.merchantApps.set(merchant.userId, merchant.authAppId);
    const code = randomBytes(16).toString('hex');
    const ttl = (this.options.codeTtlMs ?? CODE_TTL_MS) * this.options.scale;
    this.codes.set(code, { merchant, isvAppId, expiresAt: now + ttl, used: false });
    return code;
  }

  /** grant_type authorization_code: the code's merchant gets a token; the code is spent. */
  exchange(code: string, callerAppId: string, now: number): TokenRecord {
    const record = this.codes.get(code);
    if (!record || record.isvAppId !== callerAppId || record.used || now >= record.expiresAt) {
      throw codeInvalid();
    }
    record.used = true;
    return this.createToken(
      { ...record.merchant, isvAppId: record.isvAppId, authMethods: [...DEFAULT_METHODS] },
      now,
      this.lifetimes,
    );
  }

  /**
   * grant_type refresh_token: a new token and refresh token for the same authorisation. The
   * refresh token is spent; the token it belonged to works for a short grace after.
   */
  refresh(refreshToken: string, callerAppId: string, now: number): TokenRecord {
    const old = this.byRefreshToken.get(refreshToken);
    if (!old || old.isvAppId !== callerAppId) {
      throw invalidArgument('isv.refresh-token-invalid', '刷新令牌refresh_token无效');
    }
    if (old.refreshed) {
      throw invalidArgument(
        'isv.refreshed-token-invalid',
        '该刷新令牌刷出的令牌已无效,请尝试用返回的令牌再次刷新',
      );
    }
    if (now >= old.refreshEnd) throw invalidArgument('isv.refresh-token-time-out', '刷新令牌过期');
    old.refreshed = true;
    old.authEnd = Math.min(old.authEnd, now + REPLACED_TOKEN_GRACE_MS * this.options.scale);
    const { userId: id, authAppId, isvAppId, authMethods } = old;
    return this.createToken({ userId: id, authAppId, isvAppId, authMethods }, now, this.lifetimes);
  }

  /** The token as the calling app may see it: undefined when it was not granted to that app. */
  find(token: string, callerAppId: string): TokenRecord | undefined {
    const record = this.tokens.get(token);
    return record?.isvAppId === callerAppId ? record : undefined;
  }

  /** A token or refresh token as a test sees it, found by either value. */
  peek(value: string): AlipaySandboxAppAuth | undefined {
    const record = this.tokens.get(value) ?? this.byRefreshToken.get(value);
    return record && view(record);
  }

  /**
   * Whose trades a call made with `token` reaches: the authorisation's, for a token granted to the
   * calling app; the token's own, for one this gateway never granted to it. A token granted to it
   * but expired or replaced is refused, as Alipay refuses it (20001).
   */
  merchantOf(token: string, callerAppId: string, now: number): string {
    const record = this.find(token, callerAppId);
    if (!record) return `token:${token}`;
    if (now >= record.authEnd) throw tokenRefused('aop.invalid-app-auth-token', '无效的应用授权令牌');
    return `auth:${record.isvAppId}:${record.userId}`;
  }

  /** Ends a token or a refresh token (found by its value) now; false when there is none. */
  expire(value: string, now: number): boolean {
    const token = this.tokens.get(value);
    if (token) token.authEnd = Math.min(token.authEnd, now);
    const refresh = this.byRefreshToken.get(value);
    if (refresh) refresh.refreshEnd = Math.min(refresh.refreshEnd, now);
    return token !== undefined || refresh !== undefined;
  }

  private merchantApp(merchantUserId: string | undefined): string {
    return (merchantUserId && this.merchantApps.get(merchantUserId)) || `2021${randomDigits(12)}`;
  }

  private createToken(
    grant: { userId: string; authAppId: string; isvAppId: string; authMethods: string[] },
    start: number,
    lifetimes: AppAuthLifetimes,
  ): TokenRecord {
    const record: TokenRecord = {
      ...grant,
      appAuthToken: tokenValue(start),
      appRefreshToken: tokenValue(start),
      authStart: start,
      authEnd: start + lifetimes.expiresInSeconds * 1000,
      refreshEnd: start + lifetimes.reExpiresInSeconds * 1000,
      refreshed: false,
    };
    this.tokens.set(record.appAuthToken, record);
    this.byRefreshToken.set(record.appRefreshToken, record);
    if (grant.isvAppId === this.options.appId) this.merchantApps.set(grant.userId, grant.authAppId);
    return record;
  }
}

function view(record: TokenRecord): AlipaySandboxAppAuth {
  return {
    appAuthToken: record.appAuthToken,
    appRefreshToken: record.appRefreshToken,
    userId: record.userId,
    authAppId: record.authAppId,
    isvAppId: record.isvAppId,
    authStart: new Date(record.authStart),
    authEnd: new Date(record.authEnd),
    refreshEnd: new Date(record.refreshEnd),
    refreshed: record.refreshed,
    authMethods: [...record.authMethods],
  };
}

const secondsLeft = (until: number, now: number) => Math.max(0, Math.floor((until - now) / 1000));

/** A token as alipay.open.auth.token.app answers it: the `tokens` list and, as before it, flat. */
function tokenAnswer(record: TokenRecord, now: number): Record<string, unknown> {
  const token = {
    app_auth_token: record.appAuthToken,
    app_refresh_token: record.appRefreshToken,
    auth_app_id: record.authAppId,
    expires_in: secondsLeft(record.authEnd, now),
    re_expires_in: secondsLeft(record.refreshEnd, now),
    user_id: record.userId,
  };
  return { ...token, tokens: [token] };
}

export function appAuthHandlers(book: AppAuthBook): Record<string, Handler> {
  return {
    'alipay.open.auth.token.app': (call) => {
      const biz = validateBiz(tokenSchema, parseBizContent(call.params));
      const caller = String(call.params.app_id);
      switch (biz.grant_type) {
        case 'authorization_code':
          if (biz.code === undefined) throw missingArgument('isv.missing-parameter', '缺少必选参数 code');
          return tokenAnswer(book.exchange(biz.code, caller, call.now), call.now);
        case 'refresh_token':
          if (biz.refresh_token === undefined) {
            throw missingArgument('isv.missing-parameter', '缺少必选参数 refresh_token');
          }
          return tokenAnswer(book.refresh(biz.refresh_token, caller, call.now), call.now);
        default:
          throw invalidArgument(
            'isv.grant-type-invalid',
            'grant_type参数不正确: authorization_code or refresh_token',
          );
      }
    },

    'alipay.open.auth.token.app.query': (call) => {
      const { app_auth_token: token } = validateBiz(querySchema, parseBizContent(call.params));
      const auth = book.find(token, String(call.params.app_id));
      if (!auth) throw businessFailed('isv.invalid-app-auth-token', '无效的应用授权令牌');
      const left = Math.floor((auth.authEnd - call.now) / 1000);
      return {
        user_id: auth.userId,
        auth_app_id: auth.authAppId,
        expires_in: Math.max(0, left),
        auth_methods: auth.authMethods,
        auth_start: beijingTime(auth.authStart),
        auth_end: beijingTime(auth.authEnd),
        status: left > 0 ? 'valid' : 'invalid',
      };
    },
  };
}
