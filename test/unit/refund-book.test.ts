/**
 * The order's money (src/modules/orders/refund-book.ts) under any interleaving of payment,
 * profit sharing, refunds, returns and their results, driven as the order workflow drives it.
 * An oracle of its own keeps the money's whereabouts from the events alone and checks, after
 * every step, that money out never exceeds money in, and that every refund refused could not
 * have been made and every refund made could.
 */
import fc from 'fast-check';
import {
  decideRefund,
  nothingLeftToShare,
  openBook,
  refundedOf,
  releaseRefund,
  reserveRefund,
  returnSucceeded,
  returnUnanswered,
  settleRefund,
  shareCancelled,
  shareSettled,
  shareWhenDue,
  sharedOf,
  splitByWeight,
  startShare,
  unsharedRemainder,
  type PlannedReturn,
  type RefundBook,
  type ReturnAbility,
  unsettledReturnEnded,
} from '../../src/modules/orders/refund-book';

type Receiver = { type: string; account: string; weight: number };

type Op =
  | { op: 'refund'; part: number }
  | { op: 'return'; pick: number; outcome: 'ok' | 'refused' | 'unanswered' }
  | { op: 'unsettledResult'; pick: number; came: boolean }
  | { op: 'refundResult'; pick: number; to: 'success' | 'failed' | 'abnormal' }
  | { op: 'abnormalPaidOut'; pick: number }
  | { op: 'shareDue' }
  | { op: 'shareResult'; ok: boolean };

interface Scenario {
  amount: number;
  planned: number;
  receivers: Receiver[];
  returns: ReturnAbility['returns'];
  ops: Op[];
}

const scenarios: fc.Arbitrary<Scenario> = fc
  .record({
    amount: fc.integer({ min: 1, max: 1_000 }),
    // Whole per cents: fast-check's doubles lean to 0, which would leave most orders unshared.
    percent: fc.integer({ min: 0, max: 100 }),
    receivers: fc.array(
      fc.record({
        type: fc.constantFrom('MERCHANT_ID', 'MERCHANT_ID', 'PERSONAL_OPENID'),
        account: fc.string({ minLength: 1, maxLength: 4 }),
        weight: fc.integer({ min: 1, max: 5 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    returns: fc.constantFrom<ReturnAbility['returns']>('separate', 'separate', 'with_refund', undefined),
    // Half the runs start with the share made, so that most of their refunds meet it.
    sharedFirst: fc.boolean(),
    // Weighted so that runs reach what matters: shares made, refunds that need part of them
    // back, and those returns answered, refused or never answered.
    ops: fc.array(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record({
            op: fc.constant('refund' as const),
            // A part of the order's amount: most refunds fit, some are a little too much.
            part: fc.double({ min: 0, max: 1.1, noNaN: true }),
          }),
        },
        {
          weight: 3,
          arbitrary: fc.record({
            op: fc.constant('return' as const),
            pick: fc.nat(),
            outcome: fc.constantFrom('ok' as const, 'refused' as const, 'unanswered' as const),
          }),
        },
        {
          weight: 1,
          arbitrary: fc.record({
            op: fc.constant('unsettledResult' as const),
            pick: fc.nat(),
            came: fc.boolean(),
          }),
        },
        {
          weight: 3,
          arbitrary: fc.record({
            op: fc.constant('refundResult' as const),
            pick: fc.nat(),
            to: fc.constantFrom('success' as const, 'failed' as const, 'abnormal' as const),
          }),
        },
        { weight: 1, arbitrary: fc.record({ op: fc.constant('abnormalPaidOut' as const), pick: fc.nat() }) },
        { weight: 2, arbitrary: fc.constant({ op: 'shareDue' as const }) },
        { weight: 2, arbitrary: fc.record({ op: fc.constant('shareResult' as const), ok: fc.boolean() }) },
      ),
      { minLength: 5, maxLength: 40, size: 'large' },
    ),
  })
  .map(({ amount, percent, receivers, returns, sharedFirst, ops }) => ({
    amount,
    planned: Math.floor((amount * percent) / 100),
    receivers,
    returns,
    ops: sharedFirst ? [{ op: 'shareDue' as const }, { op: 'shareResult' as const, ok: true }, ...ops] : ops,
  }));

const ability = (returns: ReturnAbility['returns']): ReturnAbility => ({
  ...(returns ? { returns } : {}),
  returnable: (r) => r.type === 'MERCHANT_ID',
});

/** Where the money is, kept from the events alone (not from the book). */
class Oracle {
  /** Refunds succeeded or abnormal: the money left for the buyer. */
  buyerOut = 0;
  /** Refunds decided and not settled. */
  buyerReserved = 0;
  /**
   * Per receiver: given by the share (being made or made), taken back, asked back, and asked
   * back without an answer (still the receiver's, never asked again until answered).
   */
  given: number[] = [];
  takenBack: number[] = [];
  askedBack: number[] = [];
  unanswered: number[] = [];
  shareUnderWay = false;

  constructor(
    readonly amount: number,
    readonly receivers: Receiver[],
    readonly ability: ReturnAbility,
  ) {}

  /** The largest refund that can be made now, whatever the book says. */
  maxRefund(): number {
    const held = this.given.map((g, i) => g - this.takenBack[i]!);
    const merchant =
      this.amount -
      this.buyerOut -
      this.buyerReserved -
      held.reduce((s, h) => s + h, 0) +
      this.askedBack.reduce((s, a) => s + a, 0);
    if (this.shareUnderWay || !this.ability.returns) return merchant;
    const canGive = held
      .map((h, i) =>
        this.ability.returnable(this.receivers[i]!) ? h - this.askedBack[i]! - this.unanswered[i]! : 0,
      )
      .reduce((s, c) => s + c, 0);
    return merchant + canGive;
  }

  /** Money that left, or may still leave, the merchant's hands. */
  outAtMost(): number {
    const withReceivers = this.given.reduce((s, g, i) => s + g - this.takenBack[i]!, 0);
    return this.buyerOut + this.buyerReserved + withReceivers - this.askedBack.reduce((s, a) => s + a, 0);
  }
}

interface Pending {
  amount: number;
  returns: PlannedReturn[];
  /** Returns confirmed so far (separate) — the refund goes to the channel once none is left. */
  done: number;
}

function run(s: Scenario): void {
  const book: RefundBook = openBook(s.amount, s.planned);
  const can = ability(s.returns);
  const oracle = new Oracle(s.amount, s.receivers, can);
  const pending: Pending[] = [];
  const abnormal: number[] = [];
  const unsettled: PlannedReturn[] = [];
  const pick = <T>(xs: T[], n: number) => (xs.length === 0 ? undefined : n % xs.length);

  const check = (after: string) => {
    const where = `${after} in ${JSON.stringify(s)}`;
    expect([where, unsharedRemainder(book) >= 0]).toEqual([where, true]);
    expect([where, oracle.outAtMost() <= s.amount]).toEqual([where, true]);
    expect([where, book.inFlight]).toEqual([where, oracle.buyerReserved]);
    expect([where, refundedOf(book)]).toEqual([where, oracle.buyerOut]);
    for (const p of book.share.parts) {
      const open = p.unsettled ?? 0;
      expect([where, p.returned + p.returning + open <= p.shared && p.returning >= 0 && open >= 0]).toEqual([
        where,
        true,
      ]);
    }
  };

  for (const op of s.ops) {
    switch (op.op) {
      case 'refund': {
        const amount = Math.max(1, Math.round(op.part * s.amount));
        const max = oracle.maxRefund();
        const d = decideRefund(book, amount, can);
        // Every refusal was refusable, and every refund made could be made.
        expect([op, amount, max, d.ok]).toEqual([op, amount, max, amount <= max]);
        if (!d.ok) {
          expect(d.refusal.code).toBe('refund_amount_exceed');
          break;
        }
        reserveRefund(book, amount, d.returns);
        oracle.buyerReserved += amount;
        for (const r of d.returns) oracle.askedBack[r.receiver]! += r.amount;
        pending.push({ amount, returns: d.returns, done: 0 });
        break;
      }
      case 'return': {
        // Separate returns, one at a time in order, before the refund reaches the channel.
        if (s.returns !== 'separate') break;
        const waiting = pending.filter((p) => p.done < p.returns.length);
        const i = pick(waiting, op.pick);
        if (i === undefined) break;
        const p = waiting[i]!;
        const r = p.returns[p.done]!;
        if (op.outcome === 'ok') {
          returnSucceeded(book, r);
          oracle.askedBack[r.receiver]! -= r.amount;
          oracle.takenBack[r.receiver]! += r.amount;
          p.done += 1;
        } else {
          // A refused or unanswered return: the refund is refused; what came back stays with the
          // merchant, and an unanswered part stays the receiver's until the channel answers.
          let left = p.returns.slice(p.done);
          if (op.outcome === 'unanswered') {
            returnUnanswered(book, r);
            unsettled.push(r);
            oracle.askedBack[r.receiver]! -= r.amount;
            oracle.unanswered[r.receiver]! += r.amount;
            left = left.slice(1);
          }
          releaseRefund(book, p.amount, left);
          oracle.buyerReserved -= p.amount;
          for (const l of left) oracle.askedBack[l.receiver]! -= l.amount;
          pending.splice(pending.indexOf(p), 1);
        }
        break;
      }
      case 'refundResult': {
        const ready = pending.filter((p) => s.returns !== 'separate' || p.done === p.returns.length);
        const i = pick(ready, op.pick);
        if (i === undefined) break;
        const p = ready[i]!;
        pending.splice(pending.indexOf(p), 1);
        // Returns that travel with the refund happen if, and only if, the refund does.
        const left = p.returns.slice(p.done);
        settleRefund(book, p.amount, 'in_flight', op.to, left);
        for (const l of left) {
          oracle.askedBack[l.receiver]! -= l.amount;
          if (op.to !== 'failed') oracle.takenBack[l.receiver]! += l.amount;
        }
        oracle.buyerReserved -= p.amount;
        if (op.to !== 'failed') oracle.buyerOut += p.amount;
        if (op.to === 'abnormal') abnormal.push(p.amount);
        break;
      }
      case 'unsettledResult': {
        const i = pick(unsettled, op.pick);
        if (i === undefined) break;
        const [r] = unsettled.splice(i, 1);
        unsettledReturnEnded(book, r!, op.came);
        oracle.unanswered[r!.receiver]! -= r!.amount;
        if (op.came) oracle.takenBack[r!.receiver]! += r!.amount;
        break;
      }
      case 'abnormalPaidOut': {
        const i = pick(abnormal, op.pick);
        if (i === undefined) break;
        const [amount] = abnormal.splice(i, 1);
        settleRefund(book, amount!, 'abnormal', 'success');
        break;
      }
      case 'shareDue': {
        if (book.share.status !== 'pending') break;
        const due = shareWhenDue(book, s.receivers);
        if (due === 'cancelled') {
          shareCancelled(book);
          break;
        }
        expect(due.amount).toBeLessThanOrEqual(s.planned);
        expect(due.parts.reduce((t, p) => t + p.shared, 0)).toBe(due.amount);
        startShare(book, due.parts);
        oracle.shareUnderWay = true;
        oracle.given = due.parts.map((p) => p.shared);
        oracle.takenBack = due.parts.map(() => 0);
        oracle.askedBack = due.parts.map(() => 0);
        oracle.unanswered = due.parts.map(() => 0);
        break;
      }
      case 'shareResult': {
        if (book.share.status !== 'processing') break;
        shareSettled(book, op.ok ? 'finished' : 'failed');
        oracle.shareUnderWay = false;
        if (!op.ok) oracle.given = oracle.given.map(() => 0);
        break;
      }
    }
    check(op.op);
  }
}

describe('the refund book', () => {
  test('when pay, share, refunds, returns and their results interleave in any order, then money out never exceeds money in and every refusal was refusable', () => {
    fc.assert(
      fc.property(scenarios, (s) => {
        run(s);
      }),
      { numRuns: 2_000 },
    );
  });

  test('when the order was shared and a refund exceeds the unshared remainder, then the missing part is taken back from merchant receivers in their order', () => {
    const book = openBook(100, 60);
    const receivers = [
      { type: 'PERSONAL_OPENID', account: 'o1', weight: 1 },
      { type: 'MERCHANT_ID', account: 'm1', weight: 1 },
      { type: 'MERCHANT_ID', account: 'm2', weight: 1 },
    ];
    const due = shareWhenDue(book, receivers);
    if (due === 'cancelled') throw new Error('the share should be due');
    startShare(book, due.parts);
    shareSettled(book, 'finished');
    expect(sharedOf(book)).toBe(60);
    expect(unsharedRemainder(book)).toBe(40);
    expect(decideRefund(book, 75, ability('separate'))).toEqual({
      ok: true,
      returns: [
        { receiver: 1, amount: 20 },
        { receiver: 2, amount: 15 },
      ],
    });
    // The personal receiver's 20 cannot come back: at most 80 can be refunded.
    const refused = decideRefund(book, 81, ability('separate'));
    expect(refused).toEqual({
      ok: false,
      refusal: {
        code: 'refund_amount_exceed',
        message:
          'refund amount exceeds the refundable amount: 60 of the order is shared to profit-sharing receivers and cannot be taken back from its receivers; at most 40 can be refunded now',
      },
    });
    expect(decideRefund(book, 41, ability(undefined))).toMatchObject({ ok: false });
  });

  test('when the order was refunded in full before the share was due, then the share is cancelled', () => {
    const book = openBook(100, 30);
    const d = decideRefund(book, 100, ability('separate'));
    expect(d).toEqual({ ok: true, returns: [] });
    reserveRefund(book, 100, []);
    expect(nothingLeftToShare(book)).toBe(false);
    settleRefund(book, 100, 'in_flight', 'success');
    expect(nothingLeftToShare(book)).toBe(true);
    expect(shareWhenDue(book, [{ type: 'MERCHANT_ID', account: 'm', weight: 1 }])).toBe('cancelled');
  });

  test('when part of the order was refunded before the share was due, then the share takes at most what is left', () => {
    const book = openBook(100, 60);
    reserveRefund(book, 70, []);
    const due = shareWhenDue(book, [{ type: 'MERCHANT_ID', account: 'm', weight: 1 }]);
    expect(due).toMatchObject({ amount: 30 });
  });

  test('when an amount is split by weight, then the remainder goes to the first receiver', () => {
    expect(splitByWeight(10, [{ weight: 1 }, { weight: 1 }, { weight: 1 }]).map((r) => r.amount)).toEqual([
      4, 3, 3,
    ]);
  });
});
