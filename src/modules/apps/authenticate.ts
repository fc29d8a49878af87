import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Scope } from './rules';
import { AppError } from '../../platform/errors';
import type { AppSource } from './cache';
import type { AppRepository, NonceStore, RequestAdmission } from './repository';
import {
  announcedSha256,
  parseSignatureHeaders,
  SignatureError,
  signatureBase,
  verifyHmac,
  type SignableRequest,
} from '../../platform/crypto/http-signature';
import type { Logger } from '../../platform/logger';
import { isMultipart, requestHasBody } from '../../platform/http/body';
import type { AuthenticatedApp } from '../../platform/http/context';

/** SPEC §2 and §9: `created` within ±300 s, a nonce remembered for 10 minutes. */
export const SIGNATURE_WINDOW_SECONDS = 300;
export const NONCE_TTL_SECONDS = 600;
const NONCE_PATTERN = /^[\x21-\x7e]{8,128}$/;

export interface AuthDeps {
  apps: AppRepository;
  /** Where requests find their app: the per-process cache in the API, else the repository. */
  appLookup?: AppSource;
  /** Only swept here; a request's nonce is claimed by `admission`. */
  nonces: NonceStore;
  admission: RequestAdmission;
}

function unauthorized(message: string): AppError {
  return new AppError('unauthorized', message);
}

function signable(req: Request): SignableRequest {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values) headers[name] = values.map((v) => v.trim()).join(', ');
  }
  return {
    method: req.method,
    target: req.originalUrl,
    headers,
    authority: req.headers.host,
    scheme: req.protocol,
  };
}

function requiredParams(params: Map<string, unknown>): { keyid: string; created: number; nonce: string } {
  const keyid = params.get('keyid');
  const created = params.get('created');
  const nonce = params.get('nonce');
  const alg = params.get('alg');
  const expires = params.get('expires');
  if (typeof keyid !== 'string' || keyid === '') throw unauthorized('signature parameter keyid is required');
  if (typeof created !== 'number' || !Number.isInteger(created)) {
    throw unauthorized('signature parameter created is required (integer unix seconds)');
  }
  if (typeof nonce !== 'string') throw unauthorized('signature parameter nonce is required');
  if (!NONCE_PATTERN.test(nonce))
    throw unauthorized('signature parameter nonce must be 8-128 visible characters');
  if (alg !== undefined && alg !== 'hmac-sha256')
    throw unauthorized('signature parameter alg must be hmac-sha256');
  if (expires !== undefined) {
    if (typeof expires !== 'number') throw unauthorized('signature parameter expires must be an integer');
    if (expires < Date.now() / 1000) throw unauthorized('signature has expired');
  }
  return { keyid, created, nonce };
}

/**
 * Verifies the RFC 9421 signature of an app's request (SPEC §2), then that the app holds
 * `scope` and is within its rate limit. Answers 401 unauthorized / app_not_found, 403
 * permission_denied or 429 rate_limited. The scope is given where this is mounted, by the same
 * (case-sensitive) path match that routes the request, so routing and authorization cannot
 * read a path differently. For multipart bodies, which stream to their route, the announced
 * digest is left in `res.locals.expectedSha256` for the route to check as it reads the upload.
 */
export function authenticate(deps: AuthDeps, scope: Scope) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const log = res.locals.log as Logger;
    const signatureInput = req.get('signature-input');
    const signatureHeader = req.get('signature');
    if (!signatureInput || !signatureHeader)
      throw unauthorized('Signature and Signature-Input headers are required');

    let parsed;
    try {
      parsed = parseSignatureHeaders(signatureInput, signatureHeader);
    } catch (err) {
      throw unauthorized(err instanceof SignatureError ? err.message : 'unparseable signature headers');
    }
    const { keyid, created, nonce } = requiredParams(parsed.params);

    const covered = new Set(parsed.covered[0].map(([name]) => (typeof name === 'string' ? name : '')));
    const hasBody = requestHasBody(req);
    const required = ['@method', '@path', '@query', ...(hasBody ? ['content-digest'] : [])];
    const missing = required.filter((c) => !covered.has(c));
    if (missing.length) throw unauthorized(`signature must cover ${missing.map((m) => `"${m}"`).join(', ')}`);

    const app = await (deps.appLookup ?? deps.apps).findWithSecret(keyid);
    if (!app) throw new AppError('app_not_found', 'app not found');

    let base: string;
    try {
      base = signatureBase(parsed.covered, signable(req));
    } catch (err) {
      throw unauthorized(err instanceof SignatureError ? err.message : 'cannot build the signature base');
    }
    if (!verifyHmac(base, app.secret, parsed.signature)) {
      log.info('signature mismatch', { app_id: keyid, label: parsed.label });
      throw unauthorized('signature does not match');
    }

    const now = Math.floor(Date.now() / 1000);
    if (Math.abs(now - created) > SIGNATURE_WINDOW_SECONDS) {
      throw unauthorized(
        `signature created ${now - created} s from server time; allowed ±${SIGNATURE_WINDOW_SECONDS} s`,
      );
    }

    const digestHeader = req.get('content-digest');
    if (hasBody || digestHeader !== undefined) {
      if (digestHeader === undefined)
        throw unauthorized('Content-Digest header is required on a request with a body');
      let announced: Buffer;
      try {
        announced = announcedSha256(digestHeader);
      } catch (err) {
        throw unauthorized(err instanceof SignatureError ? err.message : 'unparseable Content-Digest');
      }
      if (isMultipart(req)) {
        res.locals.expectedSha256 = announced;
      } else {
        const actual = createHash('sha256')
          .update(req.rawBody ?? Buffer.alloc(0))
          .digest();
        if (announced.length !== actual.length || !timingSafeEqual(announced, actual)) {
          throw unauthorized('Content-Digest does not match the body');
        }
      }
    }

    // The nonce and the rate-limit step in one round trip; the answers keep their order.
    const { fresh, retryAfter } = await deps.admission.admit(app.appId, nonce, NONCE_TTL_SECONDS);
    if (!fresh) throw unauthorized('nonce already used');

    if (app.status !== 'active') throw new AppError('permission_denied', 'app is disabled');
    if (!app.scopes.includes(scope)) {
      throw new AppError('permission_denied', `app lacks the ${scope} scope`);
    }

    if (retryAfter > 0) {
      res.setHeader('Retry-After', String(retryAfter));
      throw new AppError('rate_limited', 'rate limit exceeded');
    }

    res.locals.app = { appId: app.appId, scopes: app.scopes } satisfies AuthenticatedApp;
    res.locals.log = log.child({ app_id: app.appId });
    next();
  };
}
