// Longer than 400 lines: the hosted checkout's one service. Links, order checkouts and standing
// codes share its sign-in states, its choice of the buyer's channel and its way to an order, and
// each is a few short methods over them; apart they would pass those parts back and forth.
/**
 * The hosted checkout (SPEC §15): payment links, and the buyer's way through durapay's page to an
 * ordinary order at the channel the buyer's browser belongs to.
 *
 * A buyer in WeChat or Alipay is signed in by the wallet's silent OAuth (its BuyerSignInPort):
 * the state sent along is signed and bound to the link and the channel, and its row makes it
 * single use. Back with a code, the buyer gets a JSAPI order of the link's amount and subject
 * (never anything from the page's query), made by the orders service like any other, with the
 * link's notify_url and its id. A link never has more orders pending or paid than its
 * max_payments: each order takes a place under the link row's lock first (repository.hold).
 * Any other browser sees the link's QR code, to scan with either app, and H5 pay where a channel
 * offers it.
 */
import type { Channel, BuyerSignInPort } from '../../channels/ports';
import { ChannelError } from '../../channels/errors';
import type { ChannelRegistry } from '../../channels/registry';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { randomBase32 } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import { qrImage } from '../../platform/qr';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import { CHECKOUT_PAY_METHOD, type Order, type OrderService } from '../orders';
import { CheckoutRepository, type CountedLink, type MerchantCode } from './repository';
import {
  LINK_ORDER_EXPIRE_MINUTES,
  linkOrderMinutes,
  linkOrderNo,
  linkStatusOf,
  SIGN_IN_STATE_MS,
  type LinkStatus,
} from './rules';
import { CheckoutSigner } from './state';

export interface CheckoutServiceDeps {
  db: Database;
  channels: ChannelRegistry;
  /** Where buyers reach this service: the links' and pages' addresses. */
  publicBaseUrl: string;
  payloadKeys: Keyring;
}

export interface MerchantCodeBody {
  name: string;
  notify_url: string;
  min_amount?: number;
  max_amount?: number;
}

export interface PaymentLinkBody {
  merchant_link_no: string;
  merchant_id?: string;
  amount: number;
  subject: string;
  notify_url: string;
  expires_at?: string;
  max_payments?: number;
}

/** What a buyer's visit comes to: a page to show, or where to send the browser. */
export type Visit =
  | { kind: 'redirect'; to: string }
  | { kind: 'message'; status: number; message: CheckoutMessage }
  | {
      kind: 'landing';
      subject: string;
      amount: number;
      qrImage: string;
      url: string;
      h5: string[];
      h5Action: string;
    }
  | {
      kind: 'amount';
      code: MerchantCode;
      merchantName: string;
      wallet: boolean;
      h5: string[];
      problem?: 'amount' | 'note';
      entered?: { amount: string; note: string };
    };

/** The pages that say why there is nothing to pay (pages.ts words each). */
export type CheckoutMessage =
  | 'not_found'
  | 'deactivated'
  | 'expired'
  | 'completed'
  | 'taken'
  | 'state_invalid'
  | 'state_used'
  | 'sign_in_failed'
  | 'no_channel'
  | 'create_failed'
  | 'code_not_found'
  | 'code_disabled'
  | 'order_taken'
  | 'order_closed'
  | 'order_not_found';

const LINK_STATUS_MESSAGE: Record<Exclude<LinkStatus, 'active'>, CheckoutMessage> = {
  deactivated: 'deactivated',
  expired: 'expired',
  completed: 'completed',
};

export class CheckoutService {
  readonly repository: CheckoutRepository;
  private readonly merchants: MerchantRepository;
  private readonly accounts: ChannelAccountRepository;

  constructor(
    private readonly deps: CheckoutServiceDeps,
    private readonly orders: OrderService,
  ) {
    this.repository = new CheckoutRepository(deps.db);
    this.merchants = new MerchantRepository(deps.db);
    this.accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  }

  private signerOf: CheckoutSigner | undefined;

  /** Made on first use: its keys are derived from the payload keyring. */
  get signer(): CheckoutSigner {
    this.signerOf ??= new CheckoutSigner(this.deps.payloadKeys);
    return this.signerOf;
  }

  linkUrl(linkId: string): string {
    return `${this.deps.publicBaseUrl}/checkout/l/${linkId}`;
  }

  orderPageUrl(tradeNo: string): string {
    return `${this.deps.publicBaseUrl}/checkout/o/${this.signer.orderToken(tradeNo)}`;
  }

  private signInReturnUrl(channelCode: string): string {
    return `${this.deps.publicBaseUrl}/checkout/signed-in/${channelCode}`;
  }

  // ---- the API's links ----

  async createLink(
    appId: string,
    body: PaymentLinkBody,
  ): Promise<{ link: CountedLink; isIdempotent: boolean }> {
    const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
    const maxPayments = body.max_payments ?? 1;
    const asked = {
      merchantId: body.merchant_id ?? null,
      amount: body.amount,
      subject: body.subject,
      notifyUrl: body.notify_url,
      expiresAt,
      maxPayments,
    };
    const repeat = async (): Promise<{ link: CountedLink; isIdempotent: boolean } | undefined> => {
      const existing = await this.repository.findByMerchantLinkNo(appId, body.merchant_link_no);
      if (!existing) return undefined;
      const same =
        existing.merchantId === asked.merchantId &&
        Number(existing.amount) === asked.amount &&
        existing.subject === asked.subject &&
        existing.notifyUrl === asked.notifyUrl &&
        (existing.expiresAt?.getTime() ?? null) === (asked.expiresAt?.getTime() ?? null) &&
        existing.maxPayments === asked.maxPayments;
      if (!same) {
        throw new AppError(
          'invalid_param',
          `merchant_link_no ${body.merchant_link_no} already names a link with other fields`,
        );
      }
      return { link: existing, isIdempotent: true };
    };
    const earlier = await repeat();
    if (earlier) return earlier;
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw new AppError('invalid_param', '"expires_at" must be in the future');
    }
    if (body.merchant_id !== undefined && !(await this.merchants.find(appId, body.merchant_id))) {
      throw new AppError('order_not_found', 'merchant not found');
    }
    const linkId = `pl_${randomBase32(20)}`;
    const inserted = await this.repository.insertLink({
      linkId,
      appId,
      merchantLinkNo: body.merchant_link_no,
      ...asked,
    });
    // Two creates of one merchant_link_no at once: the one that lost answers the winner's link.
    if (!inserted) return (await repeat())!;
    return { link: (await this.repository.findLink(linkId))!, isIdempotent: false };
  }

  async findLink(appId: string, linkId: string): Promise<CountedLink> {
    const link = await this.repository.findLinkOfApp(appId, linkId);
    if (!link) throw new AppError('link_not_found', 'payment link not found');
    return link;
  }

  async deactivateLink(appId: string, linkId: string): Promise<CountedLink> {
    if (!(await this.repository.deactivate(appId, linkId))) {
      throw new AppError('link_not_found', 'payment link not found');
    }
    return this.findLink(appId, linkId);
  }

  async linkView(link: CountedLink, now = new Date()) {
    const url = this.linkUrl(link.linkId);
    return {
      link_id: link.linkId,
      merchant_link_no: link.merchantLinkNo,
      merchant_id: link.merchantId,
      amount: Number(link.amount),
      subject: link.subject,
      notify_url: link.notifyUrl,
      expires_at: link.expiresAt?.toISOString() ?? null,
      max_payments: link.maxPayments,
      paid_count: link.paidCount,
      status: linkStatusOf(link, now),
      url,
      qr_code: await qrImage(url),
      created_at: link.createdAt.toISOString(),
      deactivated_at: link.deactivatedAt?.toISOString() ?? null,
    };
  }

  // ---- the buyer's visit ----

  /**
   * The channels a link's (or a checkout order's) buyer may pay at: configured, and where its
   * merchant has an account.
   */
  private async channelsFor(link: { appId: string; merchantId: string | null }): Promise<Channel[]> {
    const all = this.deps.channels
      .codes()
      .map((code) => this.deps.channels.get(code))
      .filter((c): c is Channel => c !== undefined);
    if (link.merchantId === null) return all.filter((c) => !c.capabilities.merchantRequired);
    const merchantId = link.merchantId;
    const held = await Promise.all(
      all.map(async (c) => ((await this.accounts.attachedAt(link.appId, merchantId, c.code)) ? c : null)),
    );
    return held.filter((c): c is Channel => c !== null);
  }

  /** The buyer opened a link: sent to the wallet's sign-in, or shown the link's page or why not. */
  async openLink(linkId: string, userAgent: string): Promise<Visit> {
    const link = await this.repository.findLink(linkId);
    if (!link) return { kind: 'message', status: 404, message: 'not_found' };
    const status = linkStatusOf(link, new Date());
    if (status !== 'active') return { kind: 'message', status: 410, message: LINK_STATUS_MESSAGE[status] };
    return this.arrive(
      link,
      { kind: 'link', ref: link.linkId },
      { subject: link.subject, amount: Number(link.amount), url: this.linkUrl(link.linkId) },
      `/checkout/l/${link.linkId}/h5`,
      userAgent,
    );
  }

  /**
   * A buyer arrived at a link's or a checkout order's page: in a wallet whose channel takes it,
   * sent to the wallet's sign-in with a state bound to it; in any other browser, shown the
   * page's QR code (to scan with either app) and H5 pay where a channel offers it.
   */
  private async arrive(
    of: { appId: string; merchantId: string | null },
    bound: { kind: 'link' | 'order'; ref: string },
    shown: { subject: string; amount: number; url: string },
    h5Action: string,
    userAgent: string,
  ): Promise<Visit> {
    const channels = await this.channelsFor(of);
    const wallet = channels.find((c) => c.buyerSignIn?.isWallet(userAgent));
    if (wallet) {
      const subject = { ...bound, channelCode: wallet.code };
      const { nonce, state } = this.signer.newState(subject);
      await this.repository.insertState({ nonce, ...subject }, new Date(Date.now() + SIGN_IN_STATE_MS));
      return {
        kind: 'redirect',
        to: wallet.buyerSignIn!.authorizeUrl({ redirectUri: this.signInReturnUrl(wallet.code), state }),
      };
    }
    if (isAnyWallet(userAgent, this.deps.channels)) {
      // A wallet whose channel this page cannot take (no account): say so, never a QR of itself.
      return { kind: 'message', status: 409, message: 'no_channel' };
    }
    return {
      kind: 'landing',
      ...shown,
      qrImage: await qrImage(shown.url),
      h5: channels.filter((c) => c.capabilities.payMethods.includes('h5')).map((c) => c.code),
      h5Action,
    };
  }

  // ---- an order's checkout (pay_method: checkout) ----

  /** Whether an order is a `checkout` one whose buyer has not picked a channel yet. */
  static awaitsChannel(order: Order): boolean {
    return order.payMethod === CHECKOUT_PAY_METHOD && order.channelCode === null;
  }

  /**
   * A buyer opened a `checkout` order's page before any channel was picked: sent to the
   * wallet's sign-in, or shown the page's QR code and H5 pay.
   */
  openOrder(order: Order, userAgent: string): Promise<Visit> {
    return this.arrive(
      order,
      { kind: 'order', ref: order.tradeNo },
      { subject: order.subject, amount: Number(order.amount), url: this.orderPageUrl(order.tradeNo) },
      `/checkout/o/${this.signer.orderToken(order.tradeNo)}/h5`,
      userAgent,
    );
  }

  /**
   * A `checkout` order its buyer took to a wallet, pending, opened in a browser that is not
   * that wallet: its payment goes on in the wallet, not here.
   */
  paidElsewhere(order: Order, userAgent: string): boolean {
    if (order.payMethod !== CHECKOUT_PAY_METHOD || order.channelPayMethod !== 'jsapi') return false;
    if (order.status !== 'pending' || order.channelCode === null) return false;
    return !(this.deps.channels.get(order.channelCode)?.buyerSignIn?.isWallet(userAgent) ?? false);
  }

  /** A `checkout` order's buyer in another browser chose H5 pay at a channel: on to its page. */
  async payOrderByH5(order: Order, channelCode: string, clientIp: string, log: Logger): Promise<Visit> {
    // Not a checkout order: its page (its channel was never the buyer's to pick).
    if (order.payMethod !== CHECKOUT_PAY_METHOD) {
      return { kind: 'redirect', to: this.orderPageUrl(order.tradeNo) };
    }
    const channel = (await this.channelsFor(order)).find((c) => c.code === channelCode);
    if (!channel || !channel.capabilities.payMethods.includes('h5')) {
      return { kind: 'message', status: 409, message: 'no_channel' };
    }
    return this.chooseFor(order, channel, 'h5', { client_ip: clientIp }, undefined, log);
  }

  /**
   * The channel a `checkout` order's buyer picked, asked of the order's workflow: the order's
   * page (a wallet's bridge) or the channel's H5 page next, or why not.
   */
  private async chooseFor(
    order: Order,
    channel: Channel,
    payMethod: 'jsapi' | 'h5',
    extra: Record<string, string>,
    payer: string | undefined,
    log: Logger,
  ): Promise<Visit> {
    const page: Visit = { kind: 'redirect', to: this.orderPageUrl(order.tradeNo) };
    try {
      const chosen = await this.orders.chooseChannel(
        order,
        { channelCode: channel.code, payMethod, extra, ...(payer === undefined ? {} : { payer }) },
        log,
      );
      log.info('checkout order taken to a channel', {
        trade_no: order.tradeNo,
        channel_code: channel.code,
        pay_method: payMethod,
      });
      const next = payMethod === 'h5' ? h5Url(chosen.pay_credential) : undefined;
      return next ? { kind: 'redirect', to: next } : page;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Paid meanwhile: its page says so. Closed: said here (its page may not know yet).
      if (err.code === 'order_already_paid') return page;
      if (err.code === 'order_closed') return { kind: 'message', status: 410, message: 'order_closed' };
      if (err.code === 'invalid_param') return { kind: 'message', status: 409, message: 'order_taken' };
      log.warn('checkout order could not be taken to its channel', {
        trade_no: order.tradeNo,
        channel_code: channel.code,
        code: err.code,
        error: err.message,
      });
      return { kind: 'message', status: 502, message: 'create_failed' };
    }
  }

  /** The wallet brought the buyer back: the state checked and taken, the buyer's order made. */
  async signedIn(channelCode: string, query: Record<string, unknown>, log: Logger): Promise<Visit> {
    const stateText = typeof query.state === 'string' ? query.state : '';
    const nonce = CheckoutSigner.nonceIn(stateText);
    const row = nonce ? await this.repository.findState(nonce) : null;
    // A state this service did not sign, or signed for another link or channel: no order, whatever the code.
    if (!row || row.channelCode !== channelCode || !this.signer.nonceOf(stateText, row)) {
      log.warn('checkout sign-in with a state that does not verify', { channel_code: channelCode });
      return { kind: 'message', status: 400, message: 'state_invalid' };
    }
    if (!(await this.repository.takeState(row.nonce))) {
      return { kind: 'message', status: 409, message: 'state_used' };
    }
    const channel = this.deps.channels.get(channelCode);
    const signIn: BuyerSignInPort | undefined = channel?.buyerSignIn;
    const code = signIn?.codeOf(query);
    if (!channel || !signIn || code === undefined) {
      return { kind: 'message', status: 400, message: 'sign_in_failed' };
    }
    let buyer;
    try {
      buyer = await signIn.buyerOf(code);
    } catch (err) {
      if (!(err instanceof ChannelError)) throw err;
      log.warn('checkout sign-in refused by the channel', { channel_code: channelCode, error: err.message });
      return { kind: 'message', status: 400, message: 'sign_in_failed' };
    }
    if (row.kind === 'order') {
      const order = await this.orders.repository.findOrderByTradeNo(row.ref);
      if (!order) return { kind: 'message', status: 404, message: 'order_not_found' };
      return this.chooseFor(order, channel, 'jsapi', buyer.extra, buyer.buyer, log);
    }
    if (row.kind === 'code') {
      const code = await this.repository.findCode(row.ref);
      if (!code) return { kind: 'message', status: 404, message: 'code_not_found' };
      return this.codeOrder(code, channel, 'jsapi', Number(row.amount), row.note ?? null, buyer.extra, log);
    }
    const link = await this.repository.findLink(row.ref);
    if (!link) return { kind: 'message', status: 404, message: 'not_found' };
    return this.orderFor(link, channel, 'jsapi', buyer.extra, log);
  }

  /** A buyer in another browser chose H5 pay at a channel: its order, and the channel's page. */
  async payByH5(linkId: string, channelCode: string, clientIp: string, log: Logger): Promise<Visit> {
    const link = await this.repository.findLink(linkId);
    if (!link) return { kind: 'message', status: 404, message: 'not_found' };
    const channel = (await this.channelsFor(link)).find((c) => c.code === channelCode);
    if (!channel || !channel.capabilities.payMethods.includes('h5')) {
      return { kind: 'message', status: 409, message: 'no_channel' };
    }
    const visit = await this.orderFor(link, channel, 'h5', { client_ip: clientIp }, log);
    if (visit.kind !== 'redirect' || !visit.to.includes('/checkout/o/')) return visit;
    // Straight on to the channel's own page.
    const tradeNo = this.signer.tradeNoOf(visit.to.split('/checkout/o/')[1]!)!;
    const order = await this.orders.repository.findOrderByTradeNo(tradeNo);
    const next = h5Url(order?.payCredential);
    return next ? { kind: 'redirect', to: next } : visit;
  }

  /**
   * The buyer's order for a link: the one this buyer already has pending, or a new one in a
   * place the link holds for it (never more pending and paid orders than max_payments).
   */
  private async orderFor(
    link: CountedLink,
    channel: Channel,
    payMethod: 'jsapi' | 'h5',
    extra: Record<string, string>,
    log: Logger,
  ): Promise<Visit> {
    const status = linkStatusOf(link, new Date());
    if (status !== 'active') return { kind: 'message', status: 410, message: LINK_STATUS_MESSAGE[status] };
    if (payMethod === 'jsapi') {
      // The same buyer back again (a reload, a second sign-in): the order it has.
      const mine = await this.repository.pendingOrderOf(link.linkId, extra);
      if (mine) return { kind: 'redirect', to: this.orderPageUrl(mine) };
    }
    const held = await this.repository.hold(link.linkId, new Date());
    if ('refused' in held) {
      if (held.refused === 'taken') return { kind: 'message', status: 409, message: 'taken' };
      const now = await this.repository.findLink(link.linkId);
      const why = now ? linkStatusOf(now, new Date()) : 'deactivated';
      return {
        kind: 'message',
        status: 410,
        message: why === 'active' ? 'deactivated' : LINK_STATUS_MESSAGE[why],
      };
    }
    try {
      const created = await this.orders.create(
        link.appId,
        {
          merchant_order_no: linkOrderNo(link.linkId, held.holdId),
          pay_method: payMethod,
          channel_code: channel.code,
          amount: Number(link.amount),
          subject: link.subject,
          notify_url: link.notifyUrl,
          expire_minutes: linkOrderMinutes(link.expiresAt, new Date()),
          ...(link.merchantId === null ? {} : { merchant_id: link.merchantId }),
          extra,
          payment_link_id: link.linkId,
        },
        log,
      );
      log.info('checkout order made for a payment link', {
        trade_no: created.trade_no,
        link_id: link.linkId,
        channel_code: channel.code,
      });
      return { kind: 'redirect', to: this.orderPageUrl(created.trade_no) };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      log.warn('checkout order could not be made', {
        link_id: link.linkId,
        code: err.code,
        error: err.message,
      });
      return { kind: 'message', status: 502, message: 'create_failed' };
    } finally {
      // The order's row counts from now on (or there is none): the hold has done its work.
      await this.repository.releaseHold(held.holdId);
    }
  }

  // ---- standing codes (码牌) ----

  codeUrl(codeId: string): string {
    return `${this.deps.publicBaseUrl}/checkout/c/${codeId}`;
  }

  async createCode(appId: string, merchantId: string, body: MerchantCodeBody): Promise<MerchantCode> {
    if (!(await this.merchants.find(appId, merchantId))) {
      throw new AppError('order_not_found', 'merchant not found', 404);
    }
    const minAmount = body.min_amount ?? 1;
    const maxAmount = body.max_amount ?? DEFAULT_CODE_MAX_AMOUNT;
    if (maxAmount < minAmount)
      throw new AppError('invalid_param', '"max_amount" must be at least "min_amount"');
    const codeId = `mc_${randomBase32(20)}`;
    await this.repository.insertCode({
      codeId,
      appId,
      merchantId,
      name: body.name,
      notifyUrl: body.notify_url,
      minAmount,
      maxAmount,
    });
    return (await this.repository.findCode(codeId))!;
  }

  async findCode(appId: string, merchantId: string, codeId: string): Promise<MerchantCode> {
    const code = await this.repository.findCode(codeId);
    if (!code || code.appId !== appId || code.merchantId !== merchantId) {
      throw new AppError('link_not_found', 'standing code not found');
    }
    return code;
  }

  async disableCode(appId: string, merchantId: string, codeId: string): Promise<MerchantCode> {
    if (!(await this.repository.disableCode(appId, merchantId, codeId))) {
      throw new AppError('link_not_found', 'standing code not found');
    }
    return (await this.repository.findCode(codeId))!;
  }

  async codeView(code: MerchantCode) {
    const url = this.codeUrl(code.codeId);
    return {
      code_id: code.codeId,
      merchant_id: code.merchantId,
      name: code.name,
      notify_url: code.notifyUrl,
      min_amount: Number(code.minAmount),
      max_amount: Number(code.maxAmount),
      status: code.status,
      url,
      qr_code: await qrImage(url),
      created_at: code.createdAt.toISOString(),
      disabled_at: code.disabledAt?.toISOString() ?? null,
    };
  }

  /** The channels a code's buyer may pay at: where its merchant has an account. */
  private async codeChannels(code: MerchantCode): Promise<Channel[]> {
    const all = this.deps.channels
      .codes()
      .map((c) => this.deps.channels.get(c))
      .filter((c): c is Channel => c !== undefined);
    const held = await Promise.all(
      all.map(async (c) =>
        (await this.accounts.attachedAt(code.appId, code.merchantId, c.code)) ? c : null,
      ),
    );
    return held.filter((c): c is Channel => c !== null);
  }

  private async activeCode(codeId: string): Promise<MerchantCode | Visit> {
    const code = await this.repository.findCode(codeId);
    if (!code) return { kind: 'message', status: 404, message: 'code_not_found' };
    if (code.status !== 'active') return { kind: 'message', status: 410, message: 'code_disabled' };
    return code;
  }

  /** The buyer scanned a code: the page where the amount is entered. */
  async openCode(codeId: string, userAgent: string): Promise<Visit> {
    const code = await this.activeCode(codeId);
    if ('kind' in code) return code;
    return this.amountVisit(code, userAgent);
  }

  private async amountVisit(
    code: MerchantCode,
    userAgent: string,
    problem?: 'amount' | 'note',
    entered?: { amount: string; note: string },
  ): Promise<Visit> {
    const merchant = await this.merchants.find(code.appId, code.merchantId);
    const channels = await this.codeChannels(code);
    return {
      kind: 'amount',
      code,
      merchantName: merchant?.merchantName ?? code.name,
      wallet: channels.some((c) => c.buyerSignIn?.isWallet(userAgent)),
      h5: channels.filter((c) => c.capabilities.payMethods.includes('h5')).map((c) => c.code),
      ...(problem ? { problem } : {}),
      ...(entered ? { entered } : {}),
    };
  }

  /**
   * The buyer entered an amount (and a note): in a wallet, on to its sign-in with them bound to
   * the state's row; in any other browser, H5 pay at the chosen channel.
   */
  async payCode(
    codeId: string,
    form: { amount: string; note: string; channel?: string },
    buyer: { userAgent: string; ip: string },
    log: Logger,
  ): Promise<Visit> {
    const code = await this.activeCode(codeId);
    if ('kind' in code) return code;
    const entered = { amount: form.amount, note: form.note };
    const amount = fenOf(form.amount);
    if (amount === undefined || amount < Number(code.minAmount) || amount > Number(code.maxAmount)) {
      return this.amountVisit(code, buyer.userAgent, 'amount', entered);
    }
    const note = form.note.trim();
    if ([...note].length > 64 || [...note].some((c) => c.charCodeAt(0) < 0x20)) {
      return this.amountVisit(code, buyer.userAgent, 'note', entered);
    }
    const channels = await this.codeChannels(code);
    const wallet = channels.find((c) => c.buyerSignIn?.isWallet(buyer.userAgent));
    if (wallet) {
      const subject = { kind: 'code' as const, ref: code.codeId, channelCode: wallet.code };
      const { nonce, state } = this.signer.newState(subject);
      await this.repository.insertState(
        { nonce, ...subject, amount, note: note || null },
        new Date(Date.now() + SIGN_IN_STATE_MS),
      );
      return {
        kind: 'redirect',
        to: wallet.buyerSignIn!.authorizeUrl({ redirectUri: this.signInReturnUrl(wallet.code), state }),
      };
    }
    if (isAnyWallet(buyer.userAgent, this.deps.channels)) {
      return { kind: 'message', status: 409, message: 'no_channel' };
    }
    const channel = channels.find((c) => c.code === form.channel && c.capabilities.payMethods.includes('h5'));
    if (!channel) return { kind: 'message', status: 409, message: 'no_channel' };
    const visit = await this.codeOrder(
      code,
      channel,
      'h5',
      amount,
      note || null,
      { client_ip: buyer.ip },
      log,
    );
    if (visit.kind !== 'redirect') return visit;
    const tradeNo = this.signer.tradeNoOf(visit.to.split('/checkout/o/')[1]!)!;
    const order = await this.orders.repository.findOrderByTradeNo(tradeNo);
    const next = h5Url(order?.payCredential);
    return next ? { kind: 'redirect', to: next } : visit;
  }

  private async codeOrder(
    code: MerchantCode,
    channel: Channel,
    payMethod: 'jsapi' | 'h5',
    amount: number,
    note: string | null,
    extra: Record<string, string>,
    log: Logger,
  ): Promise<Visit> {
    if (code.status !== 'active') return { kind: 'message', status: 410, message: 'code_disabled' };
    try {
      const created = await this.orders.create(
        code.appId,
        {
          merchant_order_no: `${code.codeId}-${randomBase32(12)}`,
          pay_method: payMethod,
          channel_code: channel.code,
          amount,
          subject: code.name,
          notify_url: code.notifyUrl,
          expire_minutes: LINK_ORDER_EXPIRE_MINUTES,
          merchant_id: code.merchantId,
          extra,
          standing_code_id: code.codeId,
          ...(note ? { buyer_note: note } : {}),
        },
        log,
      );
      log.info('checkout order made at a standing code', {
        trade_no: created.trade_no,
        code_id: code.codeId,
        channel_code: channel.code,
      });
      return { kind: 'redirect', to: this.orderPageUrl(created.trade_no) };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      log.warn('checkout order could not be made', {
        code_id: code.codeId,
        code: err.code,
        error: err.message,
      });
      return { kind: 'message', status: 502, message: 'create_failed' };
    }
  }

  /** The order a page token names, when the token's MAC holds. */
  async orderOfToken(token: string): Promise<Order | null> {
    const tradeNo = this.signer.tradeNoOf(token);
    return tradeNo ? this.orders.repository.findOrderByTradeNo(tradeNo) : null;
  }
}

/** The most a standing code takes by default: ¥50 000, in fen. */
export const DEFAULT_CODE_MAX_AMOUNT = 5_000_000;

/** Yuan as a buyer types them (`12`, `12.5`, `12.50`) in fen; undefined for anything else. */
export function fenOf(text: string): number | undefined {
  const match = /^\s*(\d{1,9})(?:\.(\d{1,2}))?\s*$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** Whether a user agent is any configured channel's wallet. */
function isAnyWallet(userAgent: string, channels: ChannelRegistry): boolean {
  return channels.codes().some((code) => channels.get(code)?.buyerSignIn?.isWallet(userAgent) ?? false);
}

/** Where an H5 order's credential sends the buyer: WeChat's h5_url, Alipay's or the sandbox's pay_url. */
function h5Url(credential: Record<string, unknown> | undefined): string | undefined {
  const url = credential?.h5_url ?? credential?.pay_url;
  return typeof url === 'string' && /^https?:\/\//.test(url) ? url : undefined;
}
