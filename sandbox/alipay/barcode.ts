/**
 * 当面付 条码支付 at the gateway: `alipay.trade.pay` with `scene: bar_code` (the cashier scanned
 * the buyer's 付款码) and `alipay.trade.cancel` (撤销). What the code's buyer does is read off the
 * code (../wallet-buyers.ts: Alipay's test codes are `28 99 <digit> …`; any other code of
 * Alipay's shape pays at once), so that a till meets every case a real wallet gives:
 *
 * - pays: 10000, paid; answer_lost: paid, and the connection dropped instead of the answer (of
 *   every trade.pay naming the trade, a resend's too);
 * - confirms_later: 10003 (WAIT_BUYER_PAY), paid `buyerConfirmMs` later;
 * - never_confirms: 10003, and it stays waiting until it is cancelled (or expires);
 * - confirms_at_reverse: 10003; at the cancel its payment lands first, and the cancel gives it
 *   back (action refund); reverse_refused: the same, and the cancel is refused
 *   (ACQ.CANCEL_NOT_ALLOWED): the payment stands;
 * - insufficient: 40004 ACQ.BUYER_BALANCE_NOT_ENOUGH; expired: 40004 ACQ.PAYMENT_AUTH_CODE_INVALID.
 *
 * A payment that lands is notified (TRADE_SUCCESS, the one notification 当面付 sends) to the
 * notify_url its trade.pay named. trade.pay again with the same out_trade_no answers the trade as
 * Alipay does (10003 while it waits, ACQ.TRADE_HAS_SUCCESS once paid), never a second charge;
 * with another code or amount, ACQ.CONTEXT_INCONSISTENT. The code is a credential: the gateway
 * keeps and shows its sha-256 only, and never logs it.
 */
import { createHash } from 'node:crypto';
import Joi from 'joi';
import { walletBuyerOf } from '../wallet-buyers';
import { DroppedAnswer, type AlipayGateway, type Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import { barcodePayView } from './views';
import { AlipayError, businessFailed, inProcess, invalidArgument } from './wire';

export const BARCODE_METHOD = 'alipay.trade.pay';
export const CANCEL_METHOD = 'alipay.trade.cancel';

/** Alipay's buyer codes, as alipay.trade.pay documents auth_code: 16 to 24 digits starting 25 to 30. */
const AUTH_CODE = /^(2[5-9]|30)\d{14,22}$/;

/** How many trade.pay and trade.cancel requests named a trade (valid or not, made or not). */
export interface BarcodeRequests {
  pay: number;
  cancel: number;
}

/** The requests of barcode trades by out_trade_no, refused ones (no trade made) included. */
export class BarcodeBook {
  private readonly counts = new Map<string, BarcodeRequests>();

  count(outTradeNo: string, kind: keyof BarcodeRequests): void {
    const seen = this.counts.get(outTradeNo) ?? { pay: 0, cancel: 0 };
    seen[kind] += 1;
    this.counts.set(outTradeNo, seen);
  }

  requests(outTradeNo: string): BarcodeRequests {
    return { ...(this.counts.get(outTradeNo) ?? { pay: 0, cancel: 0 }) };
  }
}

interface PayRequest {
  out_trade_no: string;
  scene: 'bar_code';
  auth_code: string;
  product_code?: string;
  terminal_id?: string;
  store_id?: string;
  [field: string]: unknown;
}

// Joi's own words for a bad pattern quote the value: the code is checked by hand instead.
const paySchema = Joi.object<PayRequest>({
  out_trade_no: Joi.string().min(1).max(64).required(),
  scene: Joi.string()
    .valid('bar_code')
    .required()
    .messages({ 'any.only': 'is bar_code here (the offline gateway has no security_code)' }),
  auth_code: Joi.string().min(1).max(32).required(),
  product_code: Joi.string().valid('FACE_TO_FACE_PAYMENT'),
  terminal_id: Joi.string().max(32),
  store_id: Joi.string().max(32),
  operator_id: Joi.string().max(28),
}).required();

interface CancelRequest {
  out_trade_no?: string;
  trade_no?: string;
}

const cancelSchema = Joi.object<CancelRequest>({
  out_trade_no: Joi.string().min(1).max(64),
  trade_no: Joi.string().min(1).max(64),
}).required();

const authCodeInvalid = () =>
  businessFailed('ACQ.PAYMENT_AUTH_CODE_INVALID', '支付授权码无效: ask the buyer to refresh the code');

export function barcodeHandlers(
  gateway: AlipayGateway,
  book: BarcodeBook,
  buyerConfirmMs: number,
): Record<string, Handler> {
  return {
    [BARCODE_METHOD]: (call) => {
      const biz = parseBizContent(call.params);
      if (typeof biz.out_trade_no === 'string') book.count(biz.out_trade_no, 'pay');
      const { auth_code: authCode, ...order } = validateBiz(paySchema, biz);
      if (!AUTH_CODE.test(authCode)) throw authCodeInvalid();
      const codeSha256 = createHash('sha256').update(authCode).digest('hex');
      const buyer = walletBuyerOf(authCode);
      const earlier = gateway.trades.peek(order.out_trade_no);
      if (earlier?.barcode && earlier.barcode.authCodeSha256 !== codeSha256) {
        throw businessFailed(
          'ACQ.CONTEXT_INCONSISTENT',
          `交易信息被篡改: out_trade_no ${order.out_trade_no} was paid with another code`,
        );
      }
      // The network loses every answer to this buyer's payment, a resend's too (a client may
      // send a request again once its connection is cut, as alipay-sdk's HTTP client does).
      if (earlier?.barcode?.buyer === 'answer_lost') {
        throw new DroppedAnswer('a barcode payment asked again (the answer_lost buyer)');
      }
      // A code refused makes no trade: asked again, it is refused again.
      if (!earlier && buyer === 'insufficient') {
        throw businessFailed('ACQ.BUYER_BALANCE_NOT_ENOUGH', '买家余额不足');
      }
      if (!earlier && buyer === 'expired') throw authCodeInvalid();
      // A repeat is the trade as it stands, or ACQ.TRADE_HAS_SUCCESS / TRADE_HAS_CLOSE /
      // CONTEXT_INCONSISTENT from the store, as Alipay answers one.
      const { trade, created } = gateway.openTrade(BARCODE_METHOD, call, order);
      if (created) {
        trade.barcode = { authCodeSha256: codeSha256, buyer };
        if (buyer === 'pays' || buyer === 'answer_lost') gateway.pay(trade, call.now);
        if (buyer === 'confirms_later') {
          gateway.scheduler.later(
            buyerConfirmMs,
            () => void gateway.pay(trade, Date.now()),
            trade.order.out_trade_no,
          );
        }
        // Charged, and the answer never reaches the till.
        if (buyer === 'answer_lost')
          throw new DroppedAnswer('a barcode payment taken (the answer_lost buyer)');
      }
      const view = barcodePayView(trade);
      return trade.status === 'WAIT_BUYER_PAY' ? inProcess(view) : view;
    },

    [CANCEL_METHOD]: (call) => {
      const ref = validateBiz(cancelSchema, parseBizContent(call.params));
      if (ref.out_trade_no === undefined && ref.trade_no === undefined) {
        throw invalidArgument('isv.missing-parameter', '缺少必选参数 out_trade_no (or trade_no)');
      }
      let trade;
      try {
        trade = gateway.find(call, ref);
      } catch (err) {
        if (!(err instanceof AlipayError && err.subCode === 'ACQ.TRADE_NOT_EXIST')) throw err;
        if (ref.out_trade_no !== undefined) book.count(ref.out_trade_no, 'cancel');
        // A trade Alipay never had is cancelled with nothing to undo: no action, no trade_no.
        return {
          ...(ref.out_trade_no === undefined ? {} : { out_trade_no: ref.out_trade_no }),
          retry_flag: 'N',
        };
      }
      book.count(trade.order.out_trade_no, 'cancel');
      const buyer = trade.barcode?.buyer;
      // The buyer's confirmation lands just before the cancel does.
      if (!trade.cancelled && (buyer === 'confirms_at_reverse' || buyer === 'reverse_refused')) {
        gateway.pay(trade, call.now);
      }
      if (buyer === 'reverse_refused' && trade.status === 'TRADE_SUCCESS') {
        throw businessFailed('ACQ.CANCEL_NOT_ALLOWED', '交易不允许撤销 (the reverse_refused test buyer)');
      }
      const action = gateway.cancelTrade(trade, call.now);
      return {
        trade_no: trade.tradeNo,
        out_trade_no: trade.order.out_trade_no,
        retry_flag: 'N',
        action,
      };
    },
  };
}
