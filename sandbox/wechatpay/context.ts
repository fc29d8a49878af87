/**
 * What the sandbox's route files share: the stores, the key that signs answers and opens sealed
 * fields, the callbacks, and the one way to answer (signed over the exact bytes sent).
 */
import type { Request, Response } from 'express';
import type { Callbacks } from './callbacks';
import type { WechatpaySandboxKeys } from './keys';
import type { LostTrades } from './lost-trades';
import type { WechatpaySharingStore } from './sharing';
import type { OrderRecord, WechatpaySandboxStore } from './store';

export interface WechatpaySandboxLogger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export interface SandboxContext {
  keys: WechatpaySandboxKeys;
  store: WechatpaySandboxStore;
  sharings: WechatpaySharingStore;
  callbacks: Callbacks;
  logger: WechatpaySandboxLogger;
  /** Paid orders whose queries are cut off until a test releases them. */
  lost: LostTrades;
  /** How long a refund or a sharing order stays PROCESSING, timeScale applied. */
  refundDelayMs: number;
  /** Where the buyer pays for an H5 or Native order. */
  checkoutUrl(order: OrderRecord): string;
  /** Every answer is signed over the exact bytes sent, errors and 204 included. */
  answer(res: Response, status: number, body?: unknown): void;
  /** A sealed field's plaintext, the request naming the platform key, or PARAM_ERROR. */
  unseal(req: Request, ciphertext: string, field: string): string;
}
